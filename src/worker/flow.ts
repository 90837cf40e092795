import { StepHookError } from './step-hook-error.js';
import type { Readable } from 'node:stream';
import type { CallTrace, CollectedAnswer, Flow, ResponseHead, StepReply, StepRequest } from '../steps/step.js';
import { ADD, REMOVE, SET, applyPlan, editPlan, type EditPlan, type HeaderEdits } from '../shared/header-edits.js';
import { SharedBody } from './shared-body.js';
import { upstreamHeaders } from './upstream-request-headers.js';
import type { RetryPolicy } from './retry-policy.js';
import type { RequestTrace } from './observe/request-trace.js';

/** The worker's Flow: header edits kept aside and applied once, when the proxy builds the upstream request. */
export class RequestFlow implements Flow {
  path: string;
  query: string | null;
  readonly vars: Record<string, unknown> = {};
  answeredBy: string | null = null;
  timeouts: { headersMs?: number; bodyMs?: number } | null = null;
  cluster: string | null = null;
  retry: RetryPolicy | null = null;
  /**
   * Whole-answer collectors (cache, compression), each with its own size limit, and the
   * largest of those limits: an answer is gathered up to it, and each collector sees it
   * only within its own, so a small limit does not stop a collector with a larger one.
   */
  collectors: { maxBytes: number; fn: (a: CollectedAnswer) => CollectedAnswer }[] | null = null;
  collectLimit = 0;
  /** The request's trace, set when its Exchange began (exchange.ts); null for a flow no request owns. */
  trace: RequestTrace | null = null;

  traceCall(method: string, url: string): CallTrace | null {
    return this.trace === null ? null : this.trace.call(method, url);
  }

  collectResponse(maxBytes: number, collector: (a: CollectedAnswer) => CollectedAnswer): void {
    (this.collectors ??= []).push({ maxBytes, fn: collector });
    this.collectLimit = Math.max(this.collectLimit, maxBytes);
  }

  /** Runs the collectors over a complete answer, in order, each within its size limit. */
  collected(answer: CollectedAnswer): CollectedAnswer {
    let a = answer;
    for (const c of this.collectors ?? []) if (a.body.length <= c.maxBytes) a = c.fn(a);
    return a;
  }
  private edits: HeaderEdits | null = null;
  /** Response edits in registration order: a hook, or a header as two entries (name, value). */
  private responseEdits: (((head: ResponseHead) => void) | string)[] | null = null;
  private doneHooks: ((status: number, stepAnswered: boolean) => void)[] | null = null;

  /** The request body, shared by the steps that read it; null for a bodiless request (nothing to share, nothing allocated). */
  private readonly body: SharedBody | null;

  constructor(
    readonly req: StepRequest,
    body: Readable | null = null,
    /** Headers the route's steps own (ownedHeaders): the client's values never go upstream. */
    private readonly owned: readonly string[] | null = null,
  ) {
    this.path = req.path;
    this.query = req.query;
    this.body = body === null ? null : new SharedBody(body);
  }

  /** The streamed body went past limitBody's cap (the proxy answers 413). */
  get bodyTooLarge(): boolean {
    return this.body !== null && this.body.tooLarge;
  }

  limitBody(maxBytes: number): void {
    this.body?.limit(maxBytes);
  }

  /** One read of the body for every step that asks: the same bytes, or a rejection past `limit` or the route's cap (shared-body.ts). */
  readBody(limit: number): Promise<Buffer> {
    return this.body === null ? Promise.resolve(Buffer.alloc(0)) : this.body.read(limit);
  }

  /** A step answered: the request body will not be read. */
  discardBody(): void {
    this.body?.discard();
  }

  /** What the proxy sends: the buffered body if a step read it (whole, so a Buffer), else the live stream. */
  upstreamBody(): Buffer | Readable | null {
    return this.body === null ? null : this.body.upstream();
  }

  setHeader(name: string, value: string): void {
    (this.edits ??= []).push(SET, name.toLowerCase(), value);
  }

  addHeader(name: string, value: string): void {
    (this.edits ??= []).push(ADD, name.toLowerCase(), value);
  }

  removeHeader(name: string): void {
    (this.edits ??= []).push(REMOVE, name.toLowerCase(), '');
  }

  onResponse(hook: (head: ResponseHead) => void): void {
    // The hook, then the step that registered it: a hook that throws is that step's failure.
    (this.responseEdits ??= []).push(hook, this.answeredBy ?? 'group');
  }

  addResponseHeader(name: string, value: string): void {
    (this.responseEdits ??= []).push(name, value);
  }

  onDone(hook: (status: number, stepAnswered: boolean) => void): void {
    // A step still running after the exchange ended (the client left meanwhile) is told at once.
    if (this.endStatus !== null) hook(this.endStatus, this.stepAnswered);
    else (this.doneHooks ??= []).push(hook);
  }

  /** A step's reply (replyHead), not the proxy stage, answered. */
  private stepAnswered = false;

  /** The request's final status (Exchange.finalStatus); null while it runs. */
  private endStatus: number | null = null;

  /**
   * The request ended: runs the done hooks once. Its Exchange calls this, early when
   * the client left while a step still works, so a second call changes nothing.
   */
  ended(status: number): void {
    if (this.endStatus !== null) return;
    this.endStatus = status;
    const hooks = this.doneHooks;
    if (hooks === null) return;
    this.doneHooks = null;
    for (const h of hooks) h(status, this.stepAnswered);
  }

  /** The header edits as a plan for the proxy's one pass (see header-edits.ts); null when there are none. */
  editPlan(): EditPlan | null {
    const plan = this.edits === null ? null : editPlan(this.edits);
    const owned = this.owned;
    if (owned === null) return plan;
    // The owned names join the drops (a step's own set values stay in the tail): as if
    // removed before the first step, without an edit per request that would take the
    // plan off its one-pass case (a remove, then a set, of one name).
    if (plan === null) return { drop: owned as string[], tail: [] };
    let drop = plan.drop;
    for (let i = 0; i < owned.length; i++) if (!drop.includes(owned[i]!)) (drop === plan.drop ? (drop = drop.slice()) : drop).push(owned[i]!);
    return drop === plan.drop ? plan : { drop, tail: plan.tail };
  }

  /** Applies the header edits to a flat [name, value, …] list of upstream headers. */
  applyHeaderEdits(flat: string[]): string[] {
    const plan = this.editPlan();
    return plan === null ? flat : applyPlan(flat, plan);
  }

  preview(): { method: string; path: string; query: string | null; headers: [string, string][] } {
    // Exactly what the proxy stage would send: hop-by-hop headers dropped, X-Forwarded-*
    // set from the socket, the steps' edits applied.
    const flat = upstreamHeaders(this.req, this.editPlan());
    const headers: [string, string][] = [];
    for (let i = 0; i < flat.length; i += 2) headers.push([flat[i]!, flat[i + 1]!]);
    return { method: this.req.method, path: this.path, query: this.query, headers };
  }

  /** Runs the response hooks and appends the added headers, in registration order; a hook that throws is a StepHookError. */
  applyResponseHooks(head: ResponseHead): void {
    const hooks = this.responseEdits;
    if (hooks === null) return;
    for (let i = 0; i < hooks.length; i++) {
      const h = hooks[i]!;
      if (typeof h === 'string') head.headers.push([h, hooks[++i] as string]);
      else {
        try {
          h(head);
        } catch (err) {
          throw new StepHookError(err, hooks[i + 1] as string);
        }
        i++;
      }
    }
  }

  get hasResponseHooks(): boolean {
    return this.responseEdits !== null;
  }

  /** A step's reply as a head, after the response hooks. */
  replyHead(r: StepReply): ResponseHead {
    const pairs = r.headers === undefined ? [] : Array.isArray(r.headers) ? r.headers : Object.entries(r.headers);
    const head: ResponseHead = { status: r.status, headers: pairs.map(([k, v]) => [k.toLowerCase(), v]) };
    this.applyResponseHooks(head);
    this.stepAnswered = true;
    return head;
  }
}
