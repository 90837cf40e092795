/**
 * The answer of POST /api/v1/{tenant}/explain (src/admin/explain/route-explain.ts and
 * handlers/explain.ts). Declared here, not imported: the server module pulls the route table
 * and path code into the console's typecheck. Fields marked "newer servers" are drawn only
 * when present, so the view works against a gateway that does not send them yet.
 */

/** What a step would do with the request, as far as explain can tell without sending it. */
export type Verdict = 'passes' | 'refuses' | 'answers' | 'at run time' | 'not reached';

export interface StepView {
  code: string;
  failureStrategy: 'FailFast' | 'Continue';
  /** Group members run concurrently; their results merge by `merge`. */
  group?: { id: string; merge: string; members: StepView[][] };
  /** Newer servers: the step's verdict, the status and error code it would answer with, and why. */
  verdict?: Verdict;
  status?: number;
  error?: string;
  reason?: string;
}

/** Only `type` is certain: a route refused before its terminal (TLS required, a plain request) carries nothing else. */
export interface Terminal {
  type: 'cluster' | 'redirect' | 'directResponse';
  cluster?: string;
  steps?: StepView[];
  websocket?: boolean;
  location?: string;
  statusCode?: number;
}

export interface RouteSummary {
  name: string;
  order: number;
  pathPrefix: string;
  tls?: string;
  terminal: Terminal;
}

export type Outcome = 'wins' | 'path' | 'host' | 'method' | 'outranked';

export interface Candidate {
  route: string;
  order: number;
  pathPrefix: string;
  hosts: string[] | null;
  methods: string[] | null;
  outcome: Outcome;
  reason: string;
}

/** Newer servers: the target balancing would pick and what the upstream would receive. */
export interface UpstreamView {
  cluster: string;
  balance: string;
  target: string | null;
  reason: string;
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
  route: RouteSummary | null;
  /** Every route of the tenant in rank order, each with its outcome. */
  candidates: Candidate[];
  /** Null when a step ends the request first. */
  upstream?: UpstreamView | null;
}

export interface ExplainRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Newer servers: the client's IP, for the steps and hashing that read it. */
  clientAddress?: string;
  draft: boolean;
}

/**
 * The headers textarea, one `name: value` a line (blank lines skipped), as an object. A line
 * without a colon or a name throws, so a typo is not silently dropped from the simulation.
 */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim();
    if (!name) throw new Error(`Headers, line ${i + 1}: expected "name: value", got ${JSON.stringify(line)}`);
    headers[name] = line.slice(colon + 1).trim();
  });
  return headers;
}
