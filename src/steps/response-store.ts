/** A stored answer of the `cache` step. */
export interface StoredAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer;
  expires: number;
  /** When it was stored, and the age (s) the upstream's answer already had then. */
  storedAt: number;
  ageAtStore: number;
}

interface Slot extends StoredAnswer {
  base: string;
}

/**
 * The `cache` step's store, per worker: answers keyed by a base (host, path, query) plus
 * the request headers the answer's Vary named. At most `maxEntries` answers, the oldest
 * stored going first. The Vary names are remembered per base only while an answer of
 * that base is stored, so neither map outgrows `maxEntries` (a base without names is
 * looked up bare, which misses any answer stored under Vary: safe).
 */
export class ResponseStore {
  private readonly answers = new Map<string, Slot>(); // insertion order = age
  private readonly bases = new Map<string, { vary: string[]; count: number }>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.answers.size;
  }

  /** Bases with Vary names remembered (never more than `size`). */
  get baseCount(): number {
    return this.bases.size;
  }

  get(base: string, header: (name: string) => string | undefined): StoredAnswer | undefined {
    const vary = this.bases.get(base)?.vary;
    return vary === undefined ? undefined : this.answers.get(keyOf(base, vary, header));
  }

  set(base: string, vary: string[], header: (name: string) => string | undefined, answer: StoredAnswer): void {
    const key = keyOf(base, vary, header);
    if (this.answers.has(key)) this.drop(key);
    else if (this.answers.size >= this.maxEntries) this.drop(this.answers.keys().next().value!);
    this.answers.set(key, { ...answer, base });
    const entry = this.bases.get(base);
    if (entry === undefined) this.bases.set(base, { vary, count: 1 });
    else {
      // A changed Vary leaves the answers stored under the old names unreachable; they age out.
      entry.vary = vary;
      entry.count++;
    }
  }

  private drop(key: string): void {
    const slot = this.answers.get(key)!;
    this.answers.delete(key);
    const entry = this.bases.get(slot.base)!;
    if (--entry.count === 0) this.bases.delete(slot.base);
  }
}

function keyOf(base: string, names: string[], header: (name: string) => string | undefined): string {
  return names.length ? `${base}\u0000${names.map((n) => `${n}=${header(n) ?? ''}`).join('\u0000')}` : base;
}
