import type { CollectedAnswer, Flow, ResponseHead } from '../steps/step.js';

type Op = (f: Flow) => void;

/**
 * The Flow a member of a parallel group runs on: reads go to the request's flow, every
 * change is recorded and applied later, once the group has merged, in node order (so the
 * result does not depend on which member finished first).
 */
export class MemberFlow implements Flow {
  private readonly ops: Op[] = [];
  private p: string;
  private q: string | null;

  constructor(private readonly parent: Flow) {
    this.p = parent.path;
    this.q = parent.query;
  }

  get req() {
    return this.parent.req;
  }
  get vars() {
    return this.parent.vars;
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
  set query(v: string | null) {
    this.q = v;
    this.ops.push((f) => (f.query = v));
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
    this.ops.push((f) => f.setHeader(name, value));
  }
  addHeader(name: string, value: string): void {
    this.ops.push((f) => f.addHeader(name, value));
  }
  removeHeader(name: string): void {
    this.ops.push((f) => f.removeHeader(name));
  }
  onResponse(hook: (head: ResponseHead) => void): void {
    this.ops.push((f) => f.onResponse(hook));
  }
  addResponseHeader(name: string, value: string): void {
    this.ops.push((f) => f.addResponseHeader(name, value));
  }
  onDone(hook: (status: number) => void): void {
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
  preview() {
    return this.parent.preview();
  }

  /** Applies this member's recorded changes to the request's flow. */
  applyTo(f: Flow): void {
    for (const op of this.ops) op(f);
  }
}
