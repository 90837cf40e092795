import type { CompiledGeneration, CompiledRoute } from '../compiler/generation.js';

interface Entry<T> {
  rank: number;
  methods: ReadonlySet<string> | null;
  hosts: ((host: string) => boolean) | null;
  value: T;
}

interface TrieNode<T> {
  children: Map<number, TrieNode<T>> | null;
  /** Routes whose prefix ends here, best rank first. */
  entries: Entry<T>[] | null;
}

/**
 * Route lookup for one generation, built once. The host picks the tenant (claimed
 * hosts belong to their tenant, the rest to `default`); inside the tenant a character
 * trie of path prefixes is walked along the request path, so the cost grows with the
 * path's length, not the number of routes. Among the prefixes that match, the best
 * rank wins (highest order, then longest prefix, then name: fixed by the compiler).
 */
export class RouteTable<T> {
  private readonly tenants = new Map<string, TrieNode<T>>();
  private readonly exactHosts = new Map<string, string>();
  private readonly wildcardHosts = new Map<string, string>();

  constructor(gen: CompiledGeneration, build: (route: CompiledRoute) => T) {
    for (const [host, tenant] of Object.entries(gen.hostOwners)) {
      if (host.startsWith('*.')) this.wildcardHosts.set(host.slice(1), tenant);
      else this.exactHosts.set(host, tenant);
    }
    for (const [tenant, { routes }] of Object.entries(gen.tenants)) {
      const root: TrieNode<T> = { children: null, entries: null };
      for (const r of routes) insert(root, r.pathPrefix, { rank: r.rank, methods: r.methods ? new Set(r.methods) : null, hosts: hostMatcher(r.hosts), value: build(r) });
      this.tenants.set(tenant, root);
    }
  }

  /** `host` is lower case without port; `path` is normalised. */
  lookup(method: string, host: string, path: string): T | null {
    const root = this.tenants.get(this.ownerOf(host));
    if (!root) return null;
    let best: Entry<T> | null = null;
    let node: TrieNode<T> | undefined = root;
    for (let i = 0; ; i++) {
      if (node.entries) {
        for (const e of node.entries) {
          if (best && e.rank >= best.rank) break;
          if ((e.methods === null || e.methods.has(method)) && (e.hosts === null || e.hosts(host))) {
            best = e;
            break;
          }
        }
      }
      if (i >= path.length || node.children === null) break;
      node = node.children.get(path.charCodeAt(i));
      if (!node) break;
    }
    return best ? best.value : null;
  }

  private ownerOf(host: string): string {
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

function insert<T>(root: TrieNode<T>, prefix: string, entry: Entry<T>): void {
  let node = root;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    node.children ??= new Map();
    let next = node.children.get(c);
    if (!next) node.children.set(c, (next = { children: null, entries: null }));
    node = next;
  }
  (node.entries ??= []).push(entry);
  node.entries.sort((a, b) => a.rank - b.rank);
}

function hostMatcher(hosts: string[] | null): ((host: string) => boolean) | null {
  if (!hosts) return null;
  const exact = new Set(hosts.filter((h) => !h.startsWith('*.')));
  const suffixes = hosts.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  return (host) => exact.has(host) || suffixes.some((s) => host.endsWith(s) && host.length > s.length);
}

/** The Host header as routes see it: lower case, no port, no trailing dot. */
export function routingHost(raw: string | undefined): string {
  if (!raw) return '';
  let h = raw.toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  if (colon !== -1) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}
