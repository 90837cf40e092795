import type { CallTrace, CollectedAnswer, Flow, ResponseHead } from '../steps/step.js';
import { ADD, REMOVE, SET, type HeaderEdits } from '../shared/header-edits.js';
import { rebaseQuery } from './query-rebase.js';

type Op = (f: Flow) => void;

/**
 * The Flow a member of a parallel group runs on: reads go to the request's flow, every
 * change is recorded and applied later, once the group has merged, in node order (so the
 * result does not depend on which member finished first); query changes as edits of the
 * query then current (query-rebase.ts).
 */
export class MemberFlow implements Flow {
  private readonly ops: Op[] = [];
  /** This member's: the group copies the deciding member's to the request's flow (pipeline.ts). */
  answeredBy: string | null = null;
  private p: string;
  private q: string | null;

  /**
   * `vars` as the request's own object, written through (a cache member reads the
   * consumer its key-auth sibling set, as in a plain chain), with this member's writes
   * noted: when the group settles without it, they are taken back and later ones dropped
   * (discard), so a refused member's consumer never reaches the steps after the group.
   */
  readonly vars: Record<string, unknown>;
  private readonly written = new Map<string, unknown>();
  private open = true;

  constructor(private readonly parent: Flow) {
    this.p = parent.path;
    this.q = parent.query;
    this.vars = new Proxy(parent.vars, {
      set: (target, key, value) => {
        if (!this.open || typeof key !== 'string') return true; // a member that no longer counts writes nothing
        target[key] = value;
        this.written.set(key, value);
        return true;
      },
    });
  }

  /** The group settled without this member: its `vars` writes are taken back (where still its own) and later ones dropped. */
  discard(before: Record<string, unknown>): void {
    this.open = false;
    const vars = this.parent.vars;
    for (const [k, v] of this.written) {
      if (vars[k] !== v) continue; // since overwritten by a member that counts
      if (Object.hasOwn(before, k)) vars[k] = before[k];
      else delete vars[k];
    }
  }

  get req() {
    return this.parent.req;
  }
  /** A member's service call belongs to the request's trace at once (it is no change to apply later). */
  traceCall(method: string, url: string): CallTrace | null {
    return this.parent.traceCall(method, url);
  }
  get path() {
    return this.p;
  }
  set path(v: string) {
    this.p = v;
    this.ops.push((f) => (f.path = v));
  }
  get query() {
    return this.q;
  }
  /** Recorded as an edit (removed and added segments), not a whole query: siblings' edits compose. */
  set query(v: string | null) {
    const before = this.q;
    this.q = v;
    this.ops.push((f) => (f.query = rebaseQuery(f.query, before, v)));
  }
  get cluster() {
    return this.parent.cluster;
  }
  set cluster(v: string | null) {
    this.ops.push((f) => (f.cluster = v));
  }
  get timeouts() {
    return this.parent.timeouts;
  }
  set timeouts(v: Flow['timeouts']) {
    this.ops.push((f) => (f.timeouts = v));
  }
  get retry() {
    return this.parent.retry;
  }
  set retry(v: Flow['retry']) {
    this.ops.push((f) => (f.retry = v));
  }

  setHeader(name: string, value: string): void {
    this.headerEdits.push(SET, name.toLowerCase(), value);
  }
  addHeader(name: string, value: string): void {
    this.headerEdits.push(ADD, name.toLowerCase(), value);
  }
  removeHeader(name: string): void {
    this.headerEdits.push(REMOVE, name.toLowerCase(), '');
  }
  /** This member's header edits, in order (op, name, value triples): its preview reads them, applyTo replays them. */
  private readonly headerEdits: HeaderEdits = [];
  onResponse(hook: (head: ResponseHead) => void): void {
    this.ops.push((f) => f.onResponse(hook));
  }
  addResponseHeader(name: string, value: string): void {
    this.ops.push((f) => f.addResponseHeader(name, value));
  }
  onDone(hook: (status: number, stepAnswered: boolean) => void): void {
    // Done hooks release resources (concurrency slots, probes): register them whatever the merge decides.
    this.parent.onDone(hook);
  }
  collectResponse(maxBytes: number, collector: (a: CollectedAnswer) => CollectedAnswer): void {
    this.ops.push((f) => f.collectResponse(maxBytes, collector));
  }
  limitBody(maxBytes: number): void {
    this.ops.push((f) => f.limitBody(maxBytes));
  }
  readBody(limit: number): Promise<Buffer> {
    return this.parent.readBody(limit);
  }
  /** The request as this member's chain sees it: the request's, plus the member's own edits so far. */
  preview() {
    const base = this.parent.preview();
    let headers = base.headers;
    const e = this.headerEdits;
    for (let i = 0; i < e.length; i += 3) {
      const name = e[i + 1] as string;
      if (e[i] !== ADD) headers = headers.filter(([k]) => k !== name);
      if (e[i] !== REMOVE) headers.push([name, e[i + 2] as string]);
    }
    return { method: base.method, path: this.p, query: this.q, headers };
  }

  /** Applies this member's recorded changes to the request's flow. */
  applyTo(f: Flow): void {
    const e = this.headerEdits;
    for (let i = 0; i < e.length; i += 3) {
      const name = e[i + 1] as string;
      if (e[i] === SET) f.setHeader(name, e[i + 2] as string);
      else if (e[i] === ADD) f.addHeader(name, e[i + 2] as string);
      else f.removeHeader(name);
    }
    for (const op of this.ops) op(f);
  }
}
