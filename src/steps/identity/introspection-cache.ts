/**
 * What oauth-introspection remembers of the endpoint's answers, per worker and per route
 * step: keyed by the token's sha256 (never the token), bounded (least recently used goes
 * first), and one call at a time per token (single-flight). Pure: time comes in as `now`.
 */

/** An endpoint's answer as the step keeps it: an active token's claims and expiry (ms; Infinity: none), or inactive. */
export type Introspected = { active: true; claims: Record<string, unknown>; expMs: number } | { active: false };

export interface CachePolicy {
  /** How long an active answer is used without asking again (never past the token's exp). */
  cacheMs: number;
  /** How long an inactive answer is used (brief: a token may become valid, a typo get fixed). */
  negativeMs: number;
  /** Fail static: how long after its last good answer an active token passes while the endpoint cannot be asked (never past exp). */
  maxStaleMs: number;
  maxEntries: number;
}

interface Entry {
  readonly answer: Introspected;
  /** Used without a call until then. */
  readonly freshUntil: number;
  /** Used when a call fails until then (0: never). */
  readonly staleUntil: number;
}

/** How long an answer got at `now` is used as is, and as a fail-static fallback. */
export function lifetimes(answer: Introspected, now: number, p: CachePolicy): { freshUntil: number; staleUntil: number } {
  if (!answer.active) return { freshUntil: now + p.negativeMs, staleUntil: 0 };
  return { freshUntil: Math.min(now + p.cacheMs, answer.expMs), staleUntil: p.maxStaleMs > 0 ? Math.min(now + p.maxStaleMs, answer.expMs) : 0 };
}

export class IntrospectionCache {
  // A Map keeps insertion order: re-inserting on use makes its first key the least recently used.
  private readonly entries = new Map<string, Entry>();
  private readonly flights = new Map<string, Promise<Introspected>>();

  constructor(readonly policy: CachePolicy) {}

  get size(): number {
    return this.entries.size;
  }

  /** Calls in progress. */
  get inFlight(): number {
    return this.flights.size;
  }

  /** The answer for `key` still fresh at `now`, or null (a call is due). */
  fresh(key: string, now: number): Introspected | null {
    const e = this.entries.get(key);
    if (e === undefined) return null;
    if (now >= e.freshUntil) {
      if (now >= e.staleUntil) this.entries.delete(key);
      return null;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.answer;
  }

  /** Fail static: the last good active answer for `key`, when younger than maxStale and the token not expired; else null. */
  stale(key: string, now: number): Introspected | null {
    const e = this.entries.get(key);
    return e !== undefined && e.answer.active && now < e.staleUntil ? e.answer : null;
  }

  put(key: string, answer: Introspected, now: number): void {
    const { freshUntil, staleUntil } = lifetimes(answer, now, this.policy);
    this.entries.delete(key);
    // An answer already past its token's exp is not kept (the caller refuses it anyway).
    if (freshUntil <= now && staleUntil <= now) return;
    this.entries.set(key, { answer, freshUntil, staleUntil });
    if (this.entries.size > this.policy.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Runs `call` for `key` unless one is running: requests arriving meanwhile share its promise. */
  once(key: string, call: () => Promise<Introspected>): Promise<Introspected> {
    let p = this.flights.get(key);
    if (p === undefined) {
      p = call().finally(() => this.flights.delete(key));
      this.flights.set(key, p);
    }
    return p;
  }
}
