/**
 * The answer of POST /api/v1/{tenant}/explain: the server builds it (src/admin/explain/),
 * the CLI and the console draw it.
 */

/** What a step would do with the request, as far as explain can tell without sending it. */
export type Verdict = 'passes' | 'refuses' | 'answers' | 'at run time' | 'not reached';

export interface StepView {
  code: string;
  failureStrategy: 'FailFast' | 'Continue';
  verdict: Verdict;
  /** What the step would answer (refuses, answers): its status and error code. */
  status?: number;
  error?: string;
  reason: string;
  /** Group members run concurrently; their results merge by `merge`. */
  group?: { id: string; merge: string; members: StepView[][] };
}

/** Only `type` is certain: a route refused before its terminal (TLS required, a plain request) carries nothing else. */
export interface TerminalView {
  type: 'cluster' | 'redirect' | 'directResponse';
  cluster?: string;
  steps?: StepView[];
  websocket?: boolean;
  location?: string;
  statusCode?: number;
}

export interface RouteView {
  name: string;
  order: number;
  pathPrefix: string;
  tls?: 'required';
  terminal: TerminalView;
}

export type Outcome = 'wins' | 'path' | 'host' | 'method' | 'outranked';

export interface Candidate {
  route: string;
  order: number;
  pathPrefix: string;
  hosts: string[] | null;
  methods: string[] | null;
  /** `wins`, or why the route did not take the request. */
  outcome: Outcome;
  reason: string;
}

/** The target balancing would pick and what the upstream would receive. */
export interface UpstreamView {
  cluster: string;
  balance: 'round-robin' | 'least-request' | 'hash';
  /** Null when it depends on other requests (round robin, least-request). */
  target: string | null;
  reason: string;
  /** The path and query the upstream receives, after the steps' rewrites. */
  path: string;
  query: string | null;
}

export interface ExplainAnswer {
  tenant: string;
  against: 'published' | 'drafts';
  /** The generation explained against (published only). */
  generation?: number;
  /** Absent when nothing is published yet. */
  method?: string;
  host?: string;
  path?: string | null;
  /** Why the request is not served: no route takes it, or the route found refuses it (then `route` is set too). */
  refused: string | null;
  route: RouteView | null;
  /** Every route of the tenant in rank order, each with its outcome. */
  candidates: Candidate[];
  /** Null when a step ends the request first. */
  upstream?: UpstreamView | null;
}
