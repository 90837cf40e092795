import type { DraftRow, EntityRow } from '../contracts/entities.js';
import type { UpstreamRules } from '../shared/upstream-policy.js';
import type { SecretPolicy } from '../contracts/secrets.js';

/** The compiler's whole input: every published entity, and the publishing tenant's drafts. */
export interface Snapshot {
  tenant: string;
  published: EntityRow[];
  drafts: DraftRow[];
  /** Step codes each tenant has disabled (plugin lifecycle); absent: none. */
  disabled?: Record<string, readonly string[]>;
  /** worker.json's upstream policy; absent: no address is refused. */
  upstreams?: UpstreamRules;
  /** The environment variables steps may name (worker.json secrets.env); absent: none. */
  secrets?: SecretPolicy;
  /** Whether worker.json has `redis` (rate-limit scope cluster counts there); absent: not checked. */
  redis?: boolean;
  /**
   * For the publishing tenant's certificates: the clock, the key opener, whether a TLS port
   * listens, and whether it asks for client certificates (absent: not checked). Absent: not checked.
   */
  tls?: { now: number; openKey: (stored: string, context: string) => string; listening: boolean; clientCertificates?: boolean };
}

export interface Effective {
  /** The state the candidate generation serves: published with the tenant's drafts applied. */
  entities: EntityRow[];
  /** `kind/name` of each draft that changes something. */
  planned: string[];
}

export function applyDrafts(s: Snapshot): Effective {
  const key = (t: string, k: string, n: string) => `${t}\u0000${k}\u0000${n}`;
  const map = new Map<string, EntityRow>();
  for (const e of s.published) map.set(key(e.tenant, e.kind, e.name), e);
  const planned: string[] = [];
  for (const d of s.drafts) {
    const k = key(s.tenant, d.kind, d.name);
    const before = map.get(k);
    if (d.doc === null) {
      if (!before) continue;
      map.delete(k);
    } else {
      if (before && canonical(before.doc) === canonical(d.doc)) continue;
      map.set(k, { tenant: s.tenant, kind: d.kind, name: d.name, doc: d.doc });
    }
    planned.push(`${d.kind}/${d.name}`);
  }
  planned.sort();
  return { entities: [...map.values()], planned };
}

/** JSON with sorted keys: equal documents give equal strings. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.keys(val).sort().map((k) => [k, (val as Record<string, unknown>)[k]]))
      : val,
  );
}
