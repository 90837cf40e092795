/**
 * The provider's discovery document as an openid-client Configuration, fetched lazily by
 * the first sign-in a worker sees and kept `ttlMs`. Bounded refresh: one fetch at a time;
 * after a failed fetch none for `retryMs` (a provider that is down is not asked per
 * request); a kept document is served while its successor is fetched or when it fails.
 */
export class ProviderMetadata<C> {
  private current: C | null = null;
  private fetchedAt = 0;
  private failedAt = -Infinity;
  private pending: Promise<C> | null = null;

  constructor(
    private readonly discover: () => Promise<C>,
    private readonly ttlMs: number,
    private readonly retryMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The configuration; rejects when there is none and the provider cannot give one now. */
  get(): Promise<C> {
    const now = this.now();
    if (this.current !== null && now - this.fetchedAt < this.ttlMs) return Promise.resolve(this.current);
    if (this.pending === null && now - this.failedAt >= this.retryMs) {
      this.pending = this.fetch();
      this.pending.catch(() => {}); // a refresh nobody awaits must not be an unhandled rejection
    }
    if (this.current !== null) return Promise.resolve(this.current);
    return this.pending ?? Promise.reject(new Error('the provider could not be reached lately'));
  }

  private async fetch(): Promise<C> {
    try {
      const c = await this.discover();
      this.current = c;
      this.fetchedAt = this.now();
      return c;
    } catch (err) {
      this.failedAt = this.now();
      throw err;
    } finally {
      this.pending = null;
    }
  }
}
