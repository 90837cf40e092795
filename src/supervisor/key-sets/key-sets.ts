import type { Worker } from 'node:cluster';
import { KEY_FETCH_RESULTS, KEY_SET_STATES, KEY_WAIT_MS, type KeyFetchResult, type KeySetEntry, type KeySetState, type KeySourceSpec } from '../../contracts/key-sets.js';
import type { ToWorker } from '../../contracts/ipc.js';
import type { Logger } from '../../shared/logger.js';
import type { Exposition } from '../../shared/metrics-exposition.js';
import { UPSTREAM_DENIED } from '../../shared/upstream-policy.js';
import { keySetLifetimeSeconds } from './cache-lifetime.js';
import type { FetchedKeySet } from './key-set-fetch.js';
import { sourceLabel } from '../../shared/shown-url.js';

/** What a source is, between fetches. */
interface Source {
  spec: KeySourceSpec;
  /** sourceLabel(spec.url), made once (the id, hence the URL, never changes). */
  label: string;
  state: KeySetState;
  keys: Record<string, unknown>[];
  version: number;
  lastAttempt: number;
  lastSuccess: number;
  fetching: Promise<void> | null;
  /** The next fetch (cache lifetime, retry, or a deferred refresh) and the end of staleness. */
  next: NodeJS.Timeout | null;
  expiry: NodeJS.Timeout | null;
  /** Workers waiting for the answer to their `key-refresh`. */
  askers: Set<Worker>;
  /** Workers that asked while a fetch ran: it may have read the keys before the change they met. */
  later: Set<Worker>;
  fetches: Record<KeyFetchResult, number>;
}

export interface KeySetsOptions {
  fetch: (spec: KeySourceSpec) => Promise<FetchedKeySet>;
  /** To every worker with a process (starting ones included). */
  pushAll: (msg: ToWorker) => void;
  sendTo: (worker: Worker, msg: ToWorker) => void;
  log: Logger;
  now?: () => number;
}

/**
 * The node's key sets (contracts/key-sets.ts), one fetch per source for all workers: fetched
 * when a served generation first names a source, again when the answer's cache lifetime
 * ends (cache-lifetime.ts) or a worker meets an unknown `kid` (at most once per
 * minRefreshSeconds), and pushed to the workers on every change. A source whose provider
 * cannot be reached keeps its last good keys (stale) until maxStaleSeconds after the last
 * successful fetch, then has none (expired: its routes answer 503).
 */
export class KeySets {
  private readonly sources = new Map<string, Source>();
  private version = 0;
  private readonly now: () => number;

  constructor(private readonly o: KeySetsOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The sources of the generation served now: new ones are fetched, the others' settings follow, the ones it no longer names go. */
  serve(specs: readonly KeySourceSpec[]): void {
    const named = new Set(specs.map((s) => s.id));
    const dropped = [...this.sources.keys()].filter((id) => !named.has(id));
    for (const id of dropped) this.clear(this.sources.get(id)!);
    for (const id of dropped) this.sources.delete(id);
    if (dropped.length) this.o.pushAll({ type: 'key-sets', sets: [], dropped });
    for (const spec of specs) {
      const s = this.sources.get(spec.id);
      if (s) s.spec = spec;
      else {
        const fresh: Source = { spec, label: sourceLabel(spec.url), state: 'pending', keys: [], version: ++this.version, lastAttempt: 0, lastSuccess: 0, fetching: null, next: null, expiry: null, askers: new Set(), later: new Set(), fetches: { ok: 0, error: 0, denied: 0 } };
        this.sources.set(spec.id, fresh);
        void this.fetch(fresh);
      }
    }
  }

  /** Every source's set as workers hold it (a starting worker's init). */
  entries(): KeySetEntry[] {
    return [...this.sources.values()].map(entryOf);
  }

  /**
   * A worker asks for a fresh fetch (an unknown `kid`, or no keys yet). One is made now, or
   * when minRefreshSeconds since the last one have passed if that is within a request's wait;
   * otherwise the worker is answered with the set as it is.
   */
  refresh(id: string, from: Worker): void {
    const s = this.sources.get(id);
    if (!s) return this.o.sendTo(from, { type: 'key-sets', sets: [], dropped: [id] });
    // A first fetch answers whoever waits for it; a refresh is asked for keys the fetch under way may have missed.
    if (s.fetching) return void (s.state === 'pending' ? s.askers : s.later).add(from);
    s.askers.add(from);
    const wait = s.lastAttempt + s.spec.minRefreshSeconds * 1000 - this.now();
    if (wait <= 0) return void this.fetch(s);
    if (wait > KEY_WAIT_MS) return this.answer(s);
    // The fetch a deferred refresh would make may already be planned sooner (the cache lifetime's).
    this.schedule(s, wait, true);
  }

  /** switchyard_auth_key_fetches_total and switchyard_auth_key_set_state. */
  write(out: Exposition): void {
    out.family('switchyard_auth_key_fetches_total', 'counter', 'Fetches of a key set (JWKS, with OpenID discovery for an issuer) by the supervisor, by result: ok, error (unreachable, bad answer), denied (the upstream allow-list refused the address).');
    for (const s of this.sources.values()) for (const r of KEY_FETCH_RESULTS) out.sample('switchyard_auth_key_fetches_total', labels(s, { result: r }), s.fetches[r]);
    out.family('switchyard_auth_key_set_state', 'gauge', 'A key set\'s state (1 for the current one): pending (not fetched yet), fresh, stale (the provider failed; the last keys serve), expired (stale past maxStaleSeconds: 503).');
    for (const s of this.sources.values()) for (const st of KEY_SET_STATES) out.sample('switchyard_auth_key_set_state', labels(s, { state: st }), s.state === st ? 1 : 0);
  }

  stop(): void {
    for (const s of this.sources.values()) this.clear(s);
  }

  private fetch(s: Source): Promise<void> {
    if (s.fetching) return s.fetching;
    if (s.next) clearTimeout(s.next);
    s.next = null;
    s.lastAttempt = this.now();
    const run = this.o
      .fetch(s.spec)
      .then(
        (got) => this.fetched(s, got),
        (err: unknown) => this.failed(s, err as Error),
      )
      .finally(() => {
        s.fetching = null;
        this.answer(s);
        const later = [...s.later];
        s.later.clear();
        for (const w of later) this.refresh(s.spec.id, w);
      });
    return (s.fetching = run);
  }

  private fetched(s: Source, got: FetchedKeySet): void {
    if (this.sources.get(s.spec.id) !== s) return; // dropped while fetching
    s.fetches.ok++;
    s.lastSuccess = this.now();
    if (s.expiry) clearTimeout(s.expiry);
    s.expiry = null;
    const was = s.state;
    const changed = was !== 'fresh' || JSON.stringify(got.keys) !== JSON.stringify(s.keys);
    s.state = 'fresh';
    s.keys = got.keys;
    if (was === 'stale' || was === 'expired') this.o.log.info(this.about(s, { keys: got.keys.length }), 'key set fresh again: its provider answered');
    if (changed) this.push(s);
    const lifetime = keySetLifetimeSeconds(got.caching, this.now(), s.spec.minRefreshSeconds, s.spec.maxStaleSeconds);
    this.schedule(s, lifetime * 1000, false);
  }

  private failed(s: Source, err: Error): void {
    if (this.sources.get(s.spec.id) !== s) return;
    const denied = (err as { code?: string }).code === UPSTREAM_DENIED || (err as { cause?: { code?: string } }).cause?.code === UPSTREAM_DENIED;
    s.fetches[denied ? 'denied' : 'error']++;
    if (s.state === 'fresh') {
      s.state = 'stale';
      const until = s.lastSuccess + s.spec.maxStaleSeconds * 1000;
      this.o.log.warn(this.about(s, { err: err.message, keptUntil: new Date(until).toISOString() }), 'key set stale: its provider cannot be reached; the last keys serve until maxStaleSeconds');
      s.expiry = setTimeout(() => this.expire(s), Math.max(0, until - this.now()));
      s.expiry.unref();
      this.push(s);
    } else if (s.state === 'pending') {
      // Never fetched: nothing to keep, the routes refuse until a fetch succeeds.
      this.expire(s, err.message);
    }
    this.schedule(s, s.spec.minRefreshSeconds * 1000, false);
  }

  private expire(s: Source, why?: string): void {
    if (s.expiry) clearTimeout(s.expiry);
    s.expiry = null;
    if (s.state === 'expired' || this.sources.get(s.spec.id) !== s) return;
    s.state = 'expired';
    s.keys = [];
    this.o.log.error(this.about(s, why === undefined ? {} : { err: why }), 'key set expired: no keys; its routes answer 503 Svc.Data.AuthUnavailable until a fetch succeeds');
    this.push(s);
  }

  /** The next fetch in `ms`; `sooner`: only if that is before the one planned. */
  private schedule(s: Source, ms: number, sooner: boolean): void {
    const at = this.now() + ms;
    const timer = s.next as (NodeJS.Timeout & { at?: number }) | null;
    if (timer && sooner && (timer.at ?? Infinity) <= at) return;
    if (timer) clearTimeout(timer);
    const next = setTimeout(() => void this.fetch(s), ms) as NodeJS.Timeout & { at?: number };
    next.at = at;
    next.unref();
    s.next = next;
  }

  private push(s: Source): void {
    s.version = ++this.version;
    this.o.pushAll({ type: 'key-sets', sets: [entryOf(s)] });
  }

  /** The workers that asked hear the set as it is (a push may have told them already; the version dedupes). */
  private answer(s: Source): void {
    if (s.askers.size === 0) return;
    const msg: ToWorker = { type: 'key-sets', sets: [entryOf(s)] };
    for (const w of s.askers) this.o.sendTo(w, msg);
    s.askers.clear();
  }

  private clear(s: Source): void {
    if (s.next) clearTimeout(s.next);
    if (s.expiry) clearTimeout(s.expiry);
    s.next = s.expiry = null;
  }

  private about(s: Source, extra: Record<string, unknown>): Record<string, unknown> {
    return { tenant: s.spec.tenant, source: s.label, kind: s.spec.kind, ...extra };
  }
}

function entryOf(s: Source): KeySetEntry {
  return { id: s.spec.id, version: s.version, state: s.state, keys: s.keys, nextFetchAt: s.lastAttempt + s.spec.minRefreshSeconds * 1000 };
}

function labels(s: Source, extra: Record<string, string>): Record<string, string> {
  return { tenant: s.spec.tenant, source: s.label, ...extra };
}
