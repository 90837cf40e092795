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
  'Compile.Route.Hosts': { message: "A non-default tenant's routes must declare hosts" },
  'Compile.Route.HostConflict': { message: "The route claims a host another tenant's route already claims" },
  'Compile.Route.PathPrefix': { message: 'The pathPrefix is not in the normal form requests are matched in' },
  'Compile.Route.CaseVariant': { message: 'Warning: an upper-case variant of a protected pathPrefix reaches another route without its auth' },
  'Compile.Cluster.TargetDenied': { message: 'A cluster target is one this tenant may not reach (worker.json upstreams)' },
  'Compile.Cluster.Tls': { message: "The cluster's tls block cannot be used: no https target, an unreadable ca, or a client certificate unset or not matching its key" },
  'Compile.Cluster.SecretNotAllowed': { message: 'An environment variable the tls block names is not allowed for this tenant (worker.json secrets.env)' },
  'Compile.Cluster.TlsUnverified': { message: "Warning: verify is false: the cluster's https targets' certificates are not checked" },
  'Compile.Orch.Missing': { message: 'No orch of that name in this tenant' },
  'Compile.Orch.Cycle': { message: 'The orch refers back to itself' },
  'Compile.Orch.Depth': { message: 'The chains nest deeper than allowed' },
  'Compile.Orch.Node': { message: 'A node id is repeated' },
  'Compile.Orch.Group': { message: 'A group is invalid: its id is taken, its merge is unknown, or a node is missing or in two groups' },
  'Compile.Orch.Link': { message: 'A link names an unknown node' },
  'Compile.Orch.LinkCycle': { message: 'The links form a cycle' },
  'Compile.Orch.FailureStrategy': { message: 'Unknown failureStrategy' },
} as const satisfies Record<string, { message: string }>;

export type CompileIssueCode = keyof typeof COMPILE_ISSUES;
