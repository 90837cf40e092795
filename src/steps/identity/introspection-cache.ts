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

/** The largest kept-claims answer the cache holds (serialized); a larger one decides its request but is not kept. */
export const MAX_ENTRY_BYTES = 4 * 1024;
/** What the cache may hold in all (serialized claims plus a per-entry overhead for the key and the record), whatever maxEntries says. */
export const MAX_CACHE_BYTES = 32 * 1024 * 1024;
/** A rough count of what an entry costs besides its claims: the 43-character key, the Map slot and the record. */
const ENTRY_OVERHEAD = 128;

/** What an answer counts against the cache's bytes: its claims serialized, plus the entry's overhead. */
export function entryBytes(answer: Introspected): number {
  return ENTRY_OVERHEAD + (answer.active ? JSON.stringify(answer.claims).length : 0);
}

interface Entry {
  readonly answer: Introspected;
  /** Used without a call until then. */
  readonly freshUntil: number;
  /** Used when a call fails until then (0: never). */
  readonly staleUntil: number;
  readonly bytes: number;
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
  private held = 0;

  constructor(readonly policy: CachePolicy) {}

  get size(): number {
    return this.entries.size;
  }

  /** What the entries count against MAX_CACHE_BYTES. */
  get bytes(): number {
    return this.held;
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
      if (now >= e.staleUntil) this.drop(key, e);
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
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    // An answer already past its token's exp is not kept (the caller refuses it anyway).
    if (freshUntil <= now && staleUntil <= now) return;
    // Claims over MAX_ENTRY_BYTES even after the step's projection: that token is asked about on every request instead.
    const bytes = entryBytes(answer);
    if (bytes - ENTRY_OVERHEAD > MAX_ENTRY_BYTES) return;
    this.entries.set(key, { answer, freshUntil, staleUntil, bytes });
    this.held += bytes;
    while (this.entries.size > this.policy.maxEntries || this.held > MAX_CACHE_BYTES) {
      const [k, e] = this.entries.entries().next().value!;
      this.drop(k, e);
    }
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.held -= e.bytes;
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
