/**
 * Compile issue codes: the `code` of each entry in a dry-run's or a refused publish's
 * `issues` (and `warnings`). They have no HTTP status of their own: they travel inside
 * a 422 `Svc.Publish.Rejected`. Part of the one error registry (see errors.ts).
 */
export const COMPILE_ISSUES = {
  'Compile.Document': { message: 'The stored document does not have the shape of its kind' },
  'Compile.Step.Unknown': { message: 'No built-in step has this code' },
  'Compile.Step.Disabled': { message: 'The step is disabled for this tenant' },
  'Compile.Step.Settings': { message: "The step's settings do not fit its schema, or the step cannot be built from them" },
  'Compile.Step.Cluster': { message: "A cluster the step's settings name is not in this tenant" },
  'Compile.Step.SecretNotAllowed': { message: 'An environment variable the settings name is not allowed for this tenant (worker.json secrets.env)' },
  'Compile.Step.UrlDenied': { message: "The step's URL is one this tenant may not reach (worker.json upstreams)" },
  'Compile.Route.Terminal': { message: 'The route needs exactly one terminal: cluster, redirect or directResponse' },
  'Compile.Route.Cluster': { message: 'The cluster the route names is not in this tenant' },
  'Compile.Route.Grpc': { message: 'The route carries gRPC: its cluster must speak HTTP/2 (protocol h2 or h2c) and none of its steps may read or rewrite a body' },
  'Compile.Route.Hosts': { message: "A non-default tenant's routes must declare hosts" },
  'Compile.Route.HostConflict': { message: "The route claims a host another tenant's route already claims" },
  'Compile.Route.PathPrefix': { message: 'The pathPrefix is not in the normal form requests are matched in' },
  'Compile.Route.CaseVariant': { message: 'Warning: an upper-case variant of a protected pathPrefix reaches another route without its auth' },
  'Compile.Route.Shadowed': { message: 'Warning: a better-ranked route matches every request this route matches: it never serves' },
  'Compile.Route.TakesOver': { message: 'Warning: the planned route will take requests another route serves now' },
  'Compile.Route.StepsIgnored': { message: 'Warning: the route answers by itself (redirect, directResponse): its steps never run' },
  'Compile.Cluster.TargetDenied': { message: 'A cluster target is one this tenant may not reach (worker.json upstreams)' },
  'Compile.Cluster.Tls': { message: "The cluster's tls block cannot be used: no https target, an unreadable ca, or a client certificate unset or not matching its key" },
  'Compile.Cluster.SecretNotAllowed': { message: 'An environment variable the tls block names is not allowed for this tenant (worker.json secrets.env)' },
  'Compile.Cluster.Unused': { message: 'Warning: no route sends traffic to the cluster' },
  'Compile.Cluster.TlsUnverified': { message: "Warning: verify is false: the cluster's https targets' certificates are not checked" },
  'Compile.Orch.Missing': { message: 'No orch of that name in this tenant' },
  'Compile.Orch.Cycle': { message: 'The orch refers back to itself' },
  'Compile.Orch.Depth': { message: 'The chains nest deeper than allowed' },
  'Compile.Orch.Node': { message: 'A node id is repeated' },
  'Compile.Orch.Group': { message: 'A group is invalid: its id is taken, its merge is unknown, or a node is missing or in two groups' },
  'Compile.Orch.Link': { message: 'A link names an unknown node' },
  'Compile.Orch.LinkCycle': { message: 'The links form a cycle' },
  'Compile.Orch.FailureStrategy': { message: 'Unknown failureStrategy' },
  'Compile.Orch.Unused': { message: 'Warning: no route runs the chain' },
  'Compile.Orch.NodeNeverRuns': { message: 'Warning: a step or node comes after one that answers every request (echo): it never runs' },
  'Compile.Cert.Invalid': { message: 'The certificate or the private key cannot be read' },
  'Compile.Cert.KeyMismatch': { message: "The private key is not the certificate's" },
  'Compile.Cert.Expired': { message: 'The certificate is expired or not yet valid' },
  'Compile.Cert.Expiring': { message: 'Warning: the certificate expires within 30 days' },
  'Compile.Cert.Hosts': { message: 'A host the certificate is to serve is not among its names' },
  'Compile.Cert.HostConflict': { message: "The certificate serves a host another certificate or another tenant's route claims" },
  'Compile.Cert.Default': { message: 'Only the default tenant may have a default certificate, and only one' },
  'Compile.Tls.NoCertificate': { message: 'Warning: a route host has no certificate on the TLS port' },
} as const satisfies Record<string, { message: string }>;

export type CompileIssueCode = keyof typeof COMPILE_ISSUES;
