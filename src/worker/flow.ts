import { Readable, Transform } from 'node:stream';
import type { CollectedAnswer, Flow, ResponseHead, StepReply, StepRequest } from '../steps/step.js';
import { ADD, REMOVE, SET, applyPlan, editPlan, type EditPlan, type HeaderEdits } from './header-edits.js';
import { upstreamHeaders } from './upstream-request-headers.js';

/** The worker's Flow: header edits kept aside and applied once, when the proxy builds the upstream request. */
export class RequestFlow implements Flow {
  path: string;
  query: string | null;
  readonly vars: Record<string, unknown> = {};
  timeouts: { headersMs?: number; bodyMs?: number } | null = null;
  cluster: string | null = null;
  retry: { attempts: number; statuses: ReadonlySet<number>; backoffMs: number } | null = null;
  /**
   * Whole-answer collectors (cache, compression), each with its own size limit, and the
   * largest of those limits: an answer is gathered up to it, and each collector sees it
   * only within its own, so a small limit does not stop a collector with a larger one.
   */
  collectors: { maxBytes: number; fn: (a: CollectedAnswer) => CollectedAnswer }[] | null = null;
  collectLimit = 0;

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

  private buffered: Buffer | null = null;
  private bodyLimit = Infinity;
  /** The streamed body went past limitBody's cap (the proxy answers 413). */
  bodyTooLarge = false;

  limitBody(maxBytes: number): void {
    this.bodyLimit = Math.min(this.bodyLimit, maxBytes);
  }

  constructor(
    readonly req: StepRequest,
    private body: Readable | null = null,
    /** Headers the route's steps own (ownedHeaders): the client's values never go upstream. */
    private readonly owned: readonly string[] | null = null,
  ) {
    this.path = req.path;
    this.query = req.query;
  }

  /**
   * One read of the body for every step that asks (group members may ask at once): each
   * caller gets the same bytes, or a rejection when they exceed its `limit` or the
   * route's body cap (limitBody).
   */
  async readBody(limit: number): Promise<Buffer> {
    // The proxy is already sending the live body (a group member still running after its
    // group settled): reading it here would pause the upload under the proxy's feet.
    if (this.handedOut && this.buffered === null) throw new Error('the request body is already on its way upstream');
    const cap = Math.min(limit, this.bodyLimit);
    if (this.partial !== null && cap > this.readCap) {
      // An earlier reader went past its own, smaller limit (its failure did not count):
      // the stream was paused, not lost, so this one reads on from there.
      const chunks = this.partial;
      this.partial = null;
      this.readCap = cap;
      this.reading = this.readWhole(chunks);
    }
    // The shared read stops at the largest limit asked for so far (group members ask at
    // once), never beyond the route's cap; each caller then checks its own limit.
    this.readCap = Math.max(this.readCap, cap);
    this.reading ??= this.readWhole([]);
    const body = await this.reading;
    if (body.length > limit || body.length > this.bodyLimit) {
      if (body.length > this.bodyLimit) this.bodyTooLarge = true;
      throw new Error(`body over ${Math.min(limit, this.bodyLimit)} bytes`);
    }
    return body;
  }

  private reading: Promise<Buffer> | null = null;
  private readCap = 0;
  /**
   * What the shared read took before it went past every caller's limit, when it stayed
   * within the route's cap: the stream is paused, not destroyed, because the step that
   * asked may not count (failureStrategy Continue, a group member that lost), and then the
   * upstream gets these bytes and the rest. Destroyed, the body was gone and the client got 502.
   */
  private partial: Buffer[] | null = null;
  /** upstreamBody() gave the live stream (or the rest of it) to the proxy: no step reads it any more. */
  private handedOut = false;

  private readWhole(already: Buffer[]): Promise<Buffer> {
    const body = this.body;
    if (body === null) return Promise.resolve((this.buffered = Buffer.alloc(0)));
    return new Promise((resolve, reject) => {
      const chunks = already;
      let size = 0;
      for (const c of already) size += c.length;
      if (size > this.readCap) {
        this.partial = chunks; // still past this reader's limit: kept for the next
        return reject(new Error(`body over ${this.readCap} bytes`));
      }
      // Read on after a pause: the body may have ended meanwhile ('end' came with no listener).
      if (body.readableEnded) return resolve((this.buffered = Buffer.concat(chunks)));
      const stop = () => {
        body.pause(); // before the listener goes: a flowing stream would drop what follows
        body.off('data', onData);
        body.off('end', onEnd);
        body.off('error', onError);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
        if (size <= this.readCap) return;
        stop();
        if (size > this.bodyLimit) {
          this.bodyTooLarge = true;
          body.destroy();
        } else this.partial = chunks;
        reject(new Error(`body over ${this.readCap} bytes`));
      };
      const onEnd = () => {
        stop();
        resolve((this.buffered = Buffer.concat(chunks)));
      };
      const onError = (err: Error) => {
        stop();
        reject(err);
      };
      body.on('data', onData);
      body.once('end', onEnd);
      body.once('error', onError);
      body.resume(); // a 'data' listener alone does not restart a stream paused by an earlier reader
    });
  }

  /** A step answered: the request body will not be read. */
  discardBody(): void {
    this.body?.destroy();
  }

  /** What the proxy sends: the buffered body if a step read it (whole, so a Buffer), else the live stream. */
  upstreamBody(): Buffer | Readable | null {
    if (this.buffered !== null) {
      // A cap set after a step read the body (limitBody after body-validate) still holds.
      if (this.buffered.length > this.bodyLimit) return this.refused(this.bodyLimit);
      return this.buffered.length ? this.buffered : null;
    }
    if (this.reading !== null) {
      // A step still reading (a group's losing member): the upstream gets those same bytes.
      this.handedOut = true;
      const reading = this.reading;
      const limit = this.bodyLimit;
      const flow = this;
      return Readable.from(
        (async function* () {
          let body: Buffer;
          try {
            body = await reading;
          } catch (err) {
            // Past the reading step's limit but within the route's: what was read, then the rest.
            const partial = flow.partial;
            if (partial === null || flow.body === null) throw err;
            flow.partial = null;
            let seen = 0;
            for (const chunk of partial) {
              seen += chunk.length;
              yield chunk;
            }
            yield* flow.limited(flow.body, limit, seen);
            return;
          }
          if (body.length > limit) throw flow.overLimit(limit);
          if (body.length) yield body;
        })(),
      );
    }
    if (this.body !== null) this.handedOut = true;
    if (this.body === null || this.bodyLimit === Infinity) return this.body;
    return this.limited(this.body, this.bodyLimit, 0);
  }

  /** `source` passed on until the body (`already` bytes before it) goes past `limit`: then cut, and the proxy answers 413. */
  private limited(source: Readable, limit: number, already: number): Readable {
    let seen = already;
    const counted = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        seen += chunk.length;
        if (seen <= limit) return cb(null, chunk);
        source.destroy();
        cb(this.overLimit(limit));
      },
    });
    source.on('error', (err) => counted.destroy(err));
    return source.pipe(counted);
  }

  /** The body went past the route's cap: the proxy answers 413 (bodyTooLarge). */
  private overLimit(limit: number): Error {
    this.bodyTooLarge = true;
    return new Error(`request body over ${limit} bytes`);
  }

  /** A body that fails at once: the proxy answers 413 (bodyTooLarge). */
  private refused(limit: number): Readable {
    const err = this.overLimit(limit);
    return new Readable({
      read() {
        this.destroy(err);
      },
    });
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
    (this.responseEdits ??= []).push(hook);
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

  /** The status the request ended with (499: the client left); null while it runs. */
  private endStatus: number | null = null;

  /**
   * The request ended: runs the done hooks once. Its RequestLife calls this, early when
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

  /** Runs the response hooks and appends the added headers, in registration order. */
  applyResponseHooks(head: ResponseHead): void {
    const hooks = this.responseEdits;
    if (hooks === null) return;
    for (let i = 0; i < hooks.length; i++) {
      const h = hooks[i]!;
      if (typeof h === 'string') head.headers.push([h, hooks[++i] as string]);
      else h(head);
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
