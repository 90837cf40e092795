import type { CallTrace, ClientCertificate, CollectedAnswer, Flow, ResponseHead, StepReply, StepRequest } from '../steps/step.js';
import { syntheticRequest } from '../steps/synthetic-request.js';
import { ADD, REMOVE, SET, applyPlan, editPlan, type HeaderEdits } from '../shared/header-edits.js';

/** A synthetic request for a step under test. */
export interface TestRequest {
  /** Default GET. */
  method?: string;
  /** The path, optionally with its query (`/a?b=1`) when `query` is not given. */
  path: string;
  /** The raw query after '?', or its pairs; null or absent: none (unless the path has one). */
  query?: string | Record<string, string | string[]> | null;
  /** Names any case; an array repeats the header. */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Default 127.0.0.1. */
  clientAddress?: string;
  /** Default 'http'. */
  scheme?: 'http' | 'https';
  /** A client certificate the TLS listener verified; default none. */
  clientCert?: ClientCertificate | null;
}

/** A request the step saw, rebuilt from a TestRequest: the same parsers as the worker's (query pairs, cookies). */
function testRequest(r: TestRequest): StepRequest {
  const [path, inPath] = splitTarget(r.path);
  const query = r.query === undefined || r.query === null ? inPath : typeof r.query === 'string' ? r.query : new URLSearchParams(Object.entries(r.query).flatMap(([k, vs]) => (Array.isArray(vs) ? vs : [vs]).map((v): [string, string] => [k, v]))).toString();
  const headers: string[] = [];
  for (const [k, vs] of Object.entries(r.headers ?? {})) for (const v of Array.isArray(vs) ? vs : [vs]) headers.push(k.toLowerCase(), v);
  return syntheticRequest({ method: (r.method ?? 'GET').toUpperCase(), path, query, headers, client: r.clientAddress ?? '127.0.0.1', scheme: r.scheme ?? 'http', clientCert: r.clientCert ?? null });
}

function splitTarget(target: string): [string, string | null] {
  const q = target.indexOf('?');
  return q < 0 ? [target, null] : [target.slice(0, q), target.slice(q + 1)];
}

/**
 * A Flow no socket stands behind, for tests: header edits follow the worker's rules
 * (shared/header-edits.ts, owned headers dropped), response hooks and added headers run in
 * registration order on the head they are given, the body is the request's bytes.
 */
export class TestFlow implements Flow {
  readonly req: StepRequest;
  answeredBy: string | null = null;
  path: string;
  query: string | null;
  readonly vars: Record<string, unknown> = {};
  cluster: string | null = null;
  retry: Flow['retry'] = null;
  timeouts: Flow['timeouts'] = null;
  /** limitBody's cap, if a step set one. */
  bodyLimit: number | null = null;
  readonly collectors: { maxBytes: number; fn: (a: CollectedAnswer) => CollectedAnswer }[] = [];
  private readonly edits: HeaderEdits = [];
  private readonly responseEdits: (((head: ResponseHead) => void) | [string, string])[] = [];
  private readonly doneHooks: ((status: number, stepAnswered: boolean) => void)[] = [];
  private readonly body: Buffer;

  constructor(
    request: TestRequest,
    /** Headers the step owns: the client's values never reach the upstream. */
    private readonly owned: readonly string[],
  ) {
    this.req = testRequest(request);
    this.path = this.req.path;
    this.query = this.req.query;
    this.body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  }

  setHeader(name: string, value: string): void {
    this.edits.push(SET, name.toLowerCase(), value);
  }

  addHeader(name: string, value: string): void {
    this.edits.push(ADD, name.toLowerCase(), value);
  }

  removeHeader(name: string): void {
    this.edits.push(REMOVE, name.toLowerCase(), '');
  }

  onResponse(hook: (head: ResponseHead) => void): void {
    this.responseEdits.push(hook);
  }

  addResponseHeader(name: string, value: string): void {
    this.responseEdits.push([name.toLowerCase(), value]);
  }

  onDone(hook: (status: number, stepAnswered: boolean) => void): void {
    this.doneHooks.push(hook);
  }

  limitBody(maxBytes: number): void {
    this.bodyLimit = maxBytes;
  }

  readBody(limit: number): Promise<Buffer> {
    // The worker's words (shared-body.ts): a step may show them, never parse them.
    if (this.body.length > limit) return Promise.reject(new Error(`body over ${limit} bytes`));
    return Promise.resolve(this.body);
  }

  collectResponse(maxBytes: number, collector: (answer: CollectedAnswer) => CollectedAnswer): void {
    this.collectors.push({ maxBytes, fn: collector });
  }

  traceCall(): CallTrace | null {
    return null;
  }

  preview(): { method: string; path: string; query: string | null; headers: [string, string][] } {
    const plan = editPlan(this.edits);
    const drop = [...plan.drop, ...this.owned.filter((h) => !plan.drop.includes(h))];
    const flat = applyPlan(this.req.headers, { drop, tail: plan.tail });
    const headers: [string, string][] = [];
    for (let i = 0; i < flat.length; i += 2) headers.push([flat[i]!, flat[i + 1]!]);
    return { method: this.req.method, path: this.path, query: this.query, headers };
  }

  /** The response hooks and added headers, in registration order, on `head` (changed in place). */
  applyResponseHooks(head: ResponseHead): void {
    for (const e of this.responseEdits) {
      if (Array.isArray(e)) head.headers.push([e[0], e[1]]);
      else e(head);
    }
  }

  /** A step's reply as the client's head: lower-case names, then the response hooks. */
  replyHead(r: StepReply): ResponseHead {
    const pairs = r.headers === undefined ? [] : Array.isArray(r.headers) ? r.headers : Object.entries(r.headers);
    const head: ResponseHead = { status: r.status, headers: pairs.map(([k, v]) => [k.toLowerCase(), v]) };
    this.applyResponseHooks(head);
    return head;
  }

  /** The collectors over a whole answer, in order, each within its own size limit. */
  collected(answer: CollectedAnswer): CollectedAnswer {
    let a = answer;
    for (const c of this.collectors) if (a.body.length <= c.maxBytes) a = c.fn(a);
    return a;
  }

  private ended = false;

  /** The exchange ended with `status`: the done hooks run once. */
  end(status: number, stepAnswered: boolean): void {
    if (this.ended) return;
    this.ended = true;
    for (const h of this.doneHooks) h(status, stepAnswered);
  }
}
