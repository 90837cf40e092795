import type { CompiledGeneration, CompiledRoute } from '../contracts/generation.js';
import { splitHostPort } from './host-port.js';

interface Entry<T> {
  rank: number;
  methods: ReadonlySet<string> | null;
  value: T;
}

/**
 * The routes whose prefix ends at one trie node, each list best rank first: those for
 * any host, and the host-bound ones indexed by exact host and by wildcard suffix
 * (`.example.com`), so a lookup reads the lists of its own host, never every route's.
 */
interface Bucket<T> {
  any: Entry<T>[] | null;
  exact: Map<string, Entry<T>[]> | null;
  suffix: Map<string, Entry<T>[]> | null;
}

interface TrieNode<T> {
  children: Map<number, TrieNode<T>> | null;
  entries: Bucket<T> | null;
}

/**
 * A tenant's routes: case-sensitive prefixes in `exact`, walked along the path; those of
 * `caseSensitive: false` routes lower-cased in `folded`, walked along the lower-cased path
 * only when the tenant has any, so case-sensitive tenants pay nothing for them.
 */
interface TenantTries<T> {
  exact: TrieNode<T>;
  folded: TrieNode<T> | null;
}

/**
 * Route lookup for one generation, built once. The host picks the tenant (claimed
 * hosts belong to their tenant, the rest to `default`); inside the tenant a character
 * trie of path prefixes is walked along the request path, so the cost grows with the
 * path's length, not the number of routes; at each prefix, host-bound routes are found
 * by the request's host (see Bucket), not by trying them all. Among the prefixes that
 * match, the best rank wins (highest order, then longest prefix, then name: fixed by the
 * compiler). A `caseSensitive: false` route compares its prefix without regard to case
 * (see TenantTries); the path itself is never changed.
 */
export class RouteTable<T> {
  private readonly tenants = new Map<string, TenantTries<T>>();
  private readonly exactHosts = new Map<string, string>();
  private readonly wildcardHosts = new Map<string, string>();

  constructor(gen: CompiledGeneration, build: (route: CompiledRoute) => T) {
    for (const [host, tenant] of Object.entries(gen.hostOwners)) {
      if (host.startsWith('*.')) this.wildcardHosts.set(host.slice(1), tenant);
      else this.exactHosts.set(host, tenant);
    }
    for (const [tenant, { routes }] of Object.entries(gen.tenants)) {
      const tries: TenantTries<T> = { exact: { children: null, entries: null }, folded: null };
      for (const r of routes) {
        const entry = { rank: r.rank, methods: r.methods ? new Set(r.methods) : null, value: build(r) };
        if (r.caseSensitive) insert(tries.exact, r.pathPrefix, r.hosts ?? null, entry);
        else insert((tries.folded ??= { children: null, entries: null }), r.pathPrefix.toLowerCase(), r.hosts ?? null, entry);
      }
      sortAll(tries.exact);
      if (tries.folded) sortAll(tries.folded);
      this.tenants.set(tenant, tries);
    }
  }

  /** `host` is lower case without port; `path` is normalised. */
  lookup(method: string, host: string, path: string): T | null {
    const tries = this.tenants.get(this.tenantOf(host));
    if (!tries) return null;
    let best = walk(tries.exact, method, host, path, null);
    if (tries.folded !== null) best = walk(tries.folded, method, host, path.toLowerCase(), best);
    return best ? best.value : null;
  }

  /** The tenant a host belongs to: its claiming tenant, else `default`. */
  tenantOf(host: string): string {
    const exact = this.exactHosts.get(host);
    if (exact !== undefined) return exact;
    if (this.wildcardHosts.size) {
      for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
        const t = this.wildcardHosts.get(host.slice(dot));
        if (t !== undefined) return t;
      }
    }
    return 'default';
  }
}

/** The best entry at the prefixes of `path` in one trie, if it beats `best`. */
function walk<T>(root: TrieNode<T>, method: string, host: string, path: string, best: Entry<T> | null): Entry<T> | null {
  let node: TrieNode<T> | undefined = root;
  for (let i = 0; ; i++) {
    const b = node.entries;
    if (b !== null) {
      if (b.any !== null) best = pick(b.any, best, method);
      if (b.exact !== null) {
        const list = b.exact.get(host);
        if (list !== undefined) best = pick(list, best, method);
      }
      if (b.suffix !== null) {
        for (let dot = host.indexOf('.', 1); dot !== -1; dot = host.indexOf('.', dot + 1)) {
          const list = b.suffix.get(host.slice(dot));
          if (list !== undefined) best = pick(list, best, method);
        }
      }
    }
    if (i >= path.length || node.children === null) break;
    node = node.children.get(path.charCodeAt(i));
    if (!node) break;
  }
  return best;
}

function insert<T>(root: TrieNode<T>, prefix: string, hosts: readonly string[] | null, entry: Entry<T>): void {
  let node = root;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    node.children ??= new Map();
    let next = node.children.get(c);
    if (!next) node.children.set(c, (next = { children: null, entries: null }));
    node = next;
  }
  const b = (node.entries ??= { any: null, exact: null, suffix: null });
  if (hosts === null) return add((b.any ??= []), entry);
  for (const h of hosts) {
    if (h.startsWith('*.')) addTo((b.suffix ??= new Map()), h.slice(1), entry);
    else addTo((b.exact ??= new Map()), h, entry);
  }
}

function addTo<T>(index: Map<string, Entry<T>[]>, key: string, entry: Entry<T>): void {
  let list = index.get(key);
  if (list === undefined) index.set(key, (list = []));
  add(list, entry);
}

function add<T>(list: Entry<T>[], entry: Entry<T>): void {
  if (list[list.length - 1] !== entry) list.push(entry); // a route naming a host twice
}

/** Puts every list best rank first, once the trie is built. */
function sortAll<T>(root: TrieNode<T>): void {
  const byRank = (a: Entry<T>, b: Entry<T>) => a.rank - b.rank;
  const stack = [root];
  while (stack.length) {
    const node = stack.pop()!;
    const b = node.entries;
    if (b !== null) {
      b.any?.sort(byRank);
      for (const list of b.exact?.values() ?? []) list.sort(byRank);
      for (const list of b.suffix?.values() ?? []) list.sort(byRank);
    }
    if (node.children) for (const child of node.children.values()) stack.push(child);
  }
}

/** The first entry of a best-first list that takes `method`, if it beats `best`. */
function pick<T>(list: readonly Entry<T>[], best: Entry<T> | null, method: string): Entry<T> | null {
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    if (best !== null && e.rank >= best.rank) return best;
    if (e.methods === null || e.methods.has(method)) return e;
  }
  return best;
}

/** The Host header as routes see it: lower case, no port, no trailing dot. */
export function routingHost(raw: string | undefined): string {
  if (!raw) return '';
  const h = raw.toLowerCase();
  const hp = splitHostPort(h);
  if (hp === null) return h;
  if (hp.host.includes(':')) return `[${hp.host}]`;
  return hp.host.endsWith('.') ? hp.host.slice(0, -1) : hp.host;
}
