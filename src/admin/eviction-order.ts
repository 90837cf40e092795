/**
 * How long a new connection may go without a complete head before it counts as a stale
 * one. libuv accepts a whole batch of connections before any head on them is read, so a
 * client that sends its head at once can look headless for a loop iteration or two; a head
 * on loopback or a LAN arrives well within this.
 */
export const HEAD_GRACE_MS = 300;

/** What the order reads of a call's answer (node's ServerResponse). */
export interface AnswerView {
  /** end() was called: the answer is whole, maybe not yet taken by the client. */
  readonly writableEnded: boolean;
}

/** The connection to close and whether it is answered already (then it is only cut: a 408 after an answer would corrupt it). */
export interface Victim<K> {
  key: K;
  answered: boolean;
}

/**
 * The admin connections by what they are doing, each with when it started doing it, and
 * which one to close when a new connection finds the port full. The order, most likely an
 * attacker's first:
 *   1. without a complete head past HEAD_GRACE_MS, oldest first (a slowloris);
 *   2. between requests on a keep-alive connection that made no authenticated call, longest
 *      idle first (a flood of complete unauthenticated calls: /healthz, guesses);
 *   3. answered, the answer not yet taken, its call begun past HEAD_GRACE_MS, oldest first
 *      (a client that does not read; before fresh heads, or a flood of such clients would
 *      make the operator's new connection the only one left to close);
 *   4. without a complete head, within HEAD_GRACE_MS, oldest first;
 *   5. between requests on a connection that made an authenticated call (an operator's
 *      keep-alive, the console's): after fresh heads, so a burst of new connections cannot
 *      cut it;
 *   6. answered within HEAD_GRACE_MS.
 * A call still being handled is never closed.
 */
export class ConnectionStates<K> {
  /** Maps keep insertion order: each is oldest first. */
  private readonly headless = new Map<K, number>();
  private readonly idle = new Map<K, number>();
  /** Idle connections that made an authenticated call. */
  private readonly provenIdle = new Map<K, number>();
  /** Connections that made an authenticated call (kept while they live). */
  private readonly proven = new Set<K>();
  private readonly calls = new Map<K, { since: number; answer: AnswerView }>();

  get size(): number {
    return this.headless.size + this.idle.size + this.provenIdle.size + this.calls.size;
  }

  opened(key: K, now: number): void {
    this.headless.set(key, now);
  }

  /** A request's head completed; false when the connection is not tracked (closed by us already). */
  called(key: K, answer: AnswerView, now: number): boolean {
    if (!this.headless.delete(key) && !this.idle.delete(key) && !this.provenIdle.delete(key) && !this.calls.delete(key)) return false;
    this.calls.set(key, { since: now, answer });
    return true;
  }

  /** `answer` was taken by the client: the connection waits for its next request (a later pipelined call's answer is ignored). */
  answered(key: K, answer: AnswerView, now: number): void {
    if (this.calls.get(key)?.answer !== answer) return;
    this.calls.delete(key);
    (this.proven.has(key) ? this.provenIdle : this.idle).set(key, now);
  }

  /** The connection's call authenticated: once idle, it is closed after fresh heads (told before or after `called`). */
  prove(key: K): void {
    if (this.calls.has(key) || this.headless.has(key)) this.proven.add(key);
  }

  /** False when the connection was not tracked. */
  remove(key: K): boolean {
    this.proven.delete(key);
    return this.headless.delete(key) || this.idle.delete(key) || this.provenIdle.delete(key) || this.calls.delete(key);
  }

  /** Headless connections opened before `before`, oldest first. */
  *headlessSince(before: number): Generator<K> {
    for (const [key, since] of this.headless) {
      if (since >= before) return;
      yield key;
    }
  }

  /** The connection to close for a new one (`spare`), or null when every other one is in a call being handled. */
  victim(now: number, spare: K | null): Victim<K> | null {
    const graced = now - HEAD_GRACE_MS;
    const head = (fresh: boolean) => oldest(this.headless, spare, (since) => fresh || since < graced);
    const answered = (fresh: boolean) => {
      for (const [key, call] of this.calls) {
        if (!fresh && call.since >= graced) break;
        if (key !== spare && call.answer.writableEnded) return key;
      }
      return null;
    };
    let key = head(false) ?? oldest(this.idle, spare, () => true);
    if (key !== null) return { key, answered: false };
    key = answered(false);
    if (key !== null) return { key, answered: true };
    key = head(true) ?? oldest(this.provenIdle, spare, () => true);
    if (key !== null) return { key, answered: false };
    key = answered(true);
    return key === null ? null : { key, answered: true };
  }
}

function oldest<K>(m: Map<K, number>, spare: K | null, ok: (since: number) => boolean): K | null {
  for (const [key, since] of m) {
    if (!ok(since)) return null;
    if (key !== spare) return key;
  }
  return null;
}
