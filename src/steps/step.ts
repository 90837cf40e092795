import type * as v from 'valibot';
import type { QueryPair } from '../shared/url-query.js';
import type { ErrorCode } from '../shared/errors.js';
import type { StepBuild } from '../contracts/generation.js';
import type { KeySourceSpec } from '../contracts/key-sets.js';
import type { ClientCertificate } from '../contracts/client-certificate.js';
import type { StepContext } from './step-env.js';

export type { ClientCertificate };
export type { StepEnv, UpstreamCall, RateLimitDenied, RateLimitClient, StepContext, StepCounters } from './step-env.js';

/** The final status of a request whose client left before its response completed (nginx's 499). */
export const CLIENT_LEFT = 499;

/** What a step sees of the request. Copied once from uWS; never the uWS objects. */
export interface StepRequest {
  readonly method: string;
  /** The request's normalised path: the one routes matched and the upstream receives unless a step rewrites it. */
  readonly path: string;
  /** The raw query after '?', or null when the target has none. */
  readonly query: string | null;
  /** The query's pairs as every step reads them (url-query.ts); parsed once, when first asked. */
  readonly queryPairs: readonly QueryPair[];
  /** A cookie of the Cookie header (cookie-header.ts); the header is parsed once, when first asked. */
  cookie(name: string): string | undefined;
  /**
   * Flat `name, value, name, value, …`, names lower case, in the client's order; without
   * the identity headers (X-Forwarded-*, Forwarded, X-Real-IP, …: client-address.ts)
   * unless the peer is a trusted proxy.
   */
  readonly headers: readonly string[];
  /** The socket peer. */
  readonly remoteAddress: string;
  /**
   * The client's address: the socket peer, or, when the peer is one of worker.json's
   * `trustedProxies`, the right-most X-Forwarded-For hop that is not a trusted proxy.
   * What steps that judge or count clients use.
   */
  readonly clientAddress: string;
  /** clientAddress with `also` trusted as proxies besides worker.json's (a step's own list). */
  clientAddressTrusting(also: (ip: string) => boolean): string;
  /** The data port the client connected to (worker.json `listen.port`), as X-Forwarded-Port gives it; '' when unknown. */
  readonly localPort: string;
  /** How the client connected: 'https' on the TLS listener (X-Forwarded-Proto). */
  readonly scheme: 'http' | 'https';
  /** The first value of a header (lower-case name). */
  header(name: string): string | undefined;
  /**
   * The client certificate the TLS listener verified (worker.json
   * `listen.tls.clientCertificates`); null on the plain port, without one, or with one the
   * CAs do not verify. Read from the connection when first asked (once per connection).
   */
  readonly clientCert: ClientCertificate | null;
  /** The request's id ('' when worker.json `requestId.enabled` is false) and its header (null then). */
  readonly requestId: string;
  readonly requestIdHeader: string | null;
  /** Replaces the request's id (a route's request-id step keeping an incoming one): upstream, echo, log and envelopes follow. */
  setRequestId(header: string, id: string): void;
  /** Every value of a header that may repeat, joined as one list (RFC 9110 §5.3). */
  headerList(name: string): string | undefined;
}

/** A response head on its way to the client; response hooks may edit it in place. */
export interface ResponseHead {
  status: number;
  /** Lower-case names; repeated names allowed (set-cookie). */
  headers: [string, string][];
}

/**
 * One request's passage through a route's steps. Exists only on routes that have
 * steps. Steps read `req`, edit what the upstream will receive (`path`, `query`,
 * headers), register response hooks, and share values through `vars`.
 */
export interface Flow {
  readonly req: StepRequest;
  /** The code of the step whose answer ends the chain (set by the pipeline as each step starts; a group's, its deciding member's). */
  answeredBy: string | null;
  /** The path the upstream receives (initially req.path; path-rewrite changes it). */
  path: string;
  /** The query the upstream receives, without '?'; null for none. */
  query: string | null;
  setHeader(name: string, value: string): void;
  addHeader(name: string, value: string): void;
  removeHeader(name: string): void;
  /** Runs on the response head (the upstream's, or a step's reply) before it is sent. */
  onResponse(hook: (head: ResponseHead) => void): void;
  /**
   * Appends a header (lower-case name) to the response head, in order with the
   * response hooks: what onResponse with a hook that pushes it would do, without a
   * closure per request.
   */
  addResponseHeader(name: string, value: string): void;
  readonly vars: Record<string, unknown>;
  /** Caps the streamed request body: past `maxBytes` the upstream request is cut and the client gets 413. */
  limitBody(maxBytes: number): void;
  /** Reads the whole request body (at most `limit` bytes, else rejects); the upstream then gets these bytes. */
  readBody(limit: number): Promise<Buffer>;
  /** The cluster the proxy stage sends to, as `tenant/name`; null: the route's. */
  cluster: string | null;
  /**
   * Asks for the whole upstream answer as one buffer (only when it declares a
   * Content-Length of at most `maxBytes`; larger or unsized answers stream untouched).
   * Collectors run in registration order; each may return a changed answer.
   */
  collectResponse(maxBytes: number, collector: (answer: CollectedAnswer) => CollectedAnswer): void;
  /** Retry policy for the proxy stage (bodiless requests only); null: one attempt. */
  retry: { attempts: number; statuses: ReadonlySet<number>; backoffMs: number } | null;
  /** Per-request upstream timeouts (ms) overriding the cluster's; null: the cluster's. */
  timeouts: { headersMs?: number; bodyMs?: number } | null;
  /**
   * Runs once when the exchange ends, with the request's final status (the status sent;
   * CLIENT_LEFT when the client left before the response completed, even after its head)
   * and whether a step answered (its own reply or a stored answer), not the proxy stage.
   */
  onDone(hook: (status: number, stepAnswered: boolean) => void): void;
  /** The request as the upstream would receive it now (method, path, query, headers after edits). */
  preview(): { method: string; path: string; query: string | null; headers: [string, string][] };
  /**
   * The request's trace for a call the step makes to a service at `url` (forward-auth,
   * http-callout): send its `traceparent` with the call, then end it once. Null where no
   * request is traced (a flow outside the worker).
   */
  traceCall(method: string, url: string): CallTrace | null;
}

/** A call out of the gateway as its request's trace sees it (W3C trace context, and a span when traced). */
export interface CallTrace {
  /** The `traceparent` header the call carries. */
  readonly traceparent: string;
  /** The call was answered with `status`. */
  end(status: number): void;
  /** The call failed without an answer; `errorType` is the failure's code or name (OpenTelemetry `error.type`). */
  fail(errorType: string): void;
}

/** A failed call's `errorType` (CallTrace.fail): its code (ECONNREFUSED, UND_ERR_…) or name (TimeoutError). */
export function errorType(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | null;
  return typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'Error';
}

/** Every value of a header in a name/value list, as one comma-separated list (RFC 9110 §5.3); '' when absent. */
export function headerListOf(headers: readonly (readonly [string, string])[], name: string): string {
  return headers
    .filter(([k]) => k === name)
    .map(([, v]) => v)
    .join(', ');
}

export interface CollectedAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** A step that answers ends the chain (FailFast): the response goes to the client. */
export interface StepReply {
  status: number;
  /** A record, or name/value pairs when a name repeats (Set-Cookie, Link, Vary). */
  headers?: Record<string, string> | [string, string][];
  body: string | Buffer;
  /**
   * The answer is the step's service, not a refusal: cors's granted preflight, a cache
   * hit, echo. `failureStrategy: Continue` and `any` groups pass over refusals only, and an
   * `all` group waits for its other members before such an answer counts. Every other
   * answer (a 401, forward-auth's 302 to a login page, an injected fault) is a refusal.
   */
  served?: true;
  /** The envelope's code (stepError's): a gRPC call gets it in grpc-message. */
  code?: ErrorCode;
  /**
   * An error envelope built once for every request it refuses: the worker writes the
   * request's trace id into `body` at this offset when it sends it (withTraceId).
   */
  traceAt?: number;
}

export type StepOutcome = StepReply | undefined;

/** Sync steps return their outcome directly and never pay for a promise. */
export type StepRun = (flow: Flow) => StepOutcome | Promise<StepOutcome>;

export interface StepDefinition<S = unknown> {
  code: string;
  summary: string;
  /** What an operator must know beyond the summary (docs/steps.md prints it under it). */
  details?: string;
  /** Statuses the step itself may answer with (docs/steps.md); 0: as configured. */
  statuses: { status: number; when: string }[];
  /** Example settings, checked against the schema by the tests and shown in docs/steps.md. */
  example: Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema of any input type: valibot schemas are invariant in it, and settings arrive as parsed JSON
  schema: v.GenericSchema<any, S>;
  /** Builds the runtime function from settings the compiler already checked (StepContext). */
  create?(settings: S, ctx: StepContext): StepRun;
  /**
   * The default budget (ms) of the function's promise when a route's step gives no
   * `timeoutMs`: past it the request is answered 504 Svc.Data.StepTimeout. Absent: none.
   */
  timeoutMs?: number;
  /**
   * Request headers the step sets from what it verified (a consumer id, a subject, a
   * service's answer). The route drops the client's own values of them before its first
   * step runs, whatever this step's outcome: a failed check under failureStrategy
   * Continue, or a failed member of an `any` group, must not let them through.
   */
  ownedHeaders?(settings: S): readonly string[];
  /** Cluster names the settings refer to (checked by the compiler against the tenant's clusters). */
  clusterRefs?(settings: S): { pointer: string; name: string }[];
  /**
   * Environment variables the settings name (a secret's source). The compiler refuses a
   * name worker.json `secrets.env` does not allow the tenant, before the trial build reads it.
   */
  envRefs?(settings: S): { pointer: string; name: string }[];
  /**
   * Service URLs the settings name (forward-auth's `url`, jwt-auth's `jwksUri`/`issuer`):
   * each is held to the tenant's upstream allow-list at compile time, as clusters' targets
   * are (Compile.Step.UrlDenied at its pointer).
   */
  urlRefs?(settings: S): { pointer: string; url: string }[];
  /**
   * Key sets the supervisor must fetch for these settings of `tenant`'s step (jwt-auth's
   * `jwksUri`, or its `issuer` by discovery): the compiler lists them in the generation.
   */
  keySources?(settings: S, tenant: string): KeySourceSpec[];
  /** Whether the settings count in worker.json's `redis` (rate-limit scope cluster): a compile issue without it. */
  needsRedis?(settings: S): boolean;
  /**
   * Whether these settings answer every request, and as what: 'served' (echo: its answer
   * ends the chain under any failure strategy) or 'refusal' (fault-injection aborting 100 %,
   * which failureStrategy Continue passes over); null or absent: not every request. The
   * compiler warns about the steps placed after one (Compile.Orch.NodeNeverRuns).
   */
  alwaysAnswers?(settings: S): 'served' | 'refusal' | null;
  /**
   * What the step does with a body, for a route that refuses such steps (a gRPC route,
   * whose bodies are streams of framed messages): e.g. 'reads the request body'.
   */
  touchesBody?: string;
  /** Resolved entirely by the compiler (the `orch` binding): no runtime of its own. */
  compileTime?: boolean;
  /** A package step's build (package, version, content hash); absent: a built-in. */
  origin?: StepBuild;
  /** The decision reads the request alone: explain runs it on its dry flow (package steps; the built-ins are listed in step-verdicts.ts). */
  pure?: boolean;
}

export function defineStep<S>(def: StepDefinition<S>): StepDefinition<S> {
  return def;
}
