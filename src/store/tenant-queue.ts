/**
 * One node's writes of a tenant, one at a time, in arrival order, waiting in memory: a write
 * that would only wait on the tenant's database lock waits here instead, holding no pooled
 * connection. A tenant has an entry only while a write of it holds its turn or waits, so the
 * map is bounded by the tenants with writes in flight.
 */
export class TenantQueue {
  private readonly tenants = new Map<string, Waiter[]>();

  /** Tenants with a write holding its turn or waiting (for tests and metrics). */
  get size(): number {
    return this.tenants.size;
  }

  /**
   * Resolves with the release of `tenant`'s turn once every earlier write of it released
   * theirs; rejects with `timedOut()` after `waitMs` without the turn (leaving the queue).
   */
  enter(tenant: string, waitMs: number, timedOut: () => Error): Promise<() => void> {
    const waiters = this.tenants.get(tenant);
    if (waiters === undefined) {
      this.tenants.set(tenant, []);
      return Promise.resolve(this.releaser(tenant));
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser(tenant));
        },
      };
      // One event loop: a waiter is either granted (its timer cleared) or timed out (off the list), never both.
      const timer = setTimeout(() => {
        const i = waiters.indexOf(w);
        if (i >= 0) waiters.splice(i, 1);
        reject(timedOut());
      }, Math.max(0, waitMs));
      waiters.push(w);
    });
  }

  /** Idempotent: a second call does nothing (it must never hand on a turn it no longer holds). */
  private releaser(tenant: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const waiters = this.tenants.get(tenant);
      const next = waiters?.shift();
      if (next) next.grant();
      else this.tenants.delete(tenant);
    };
  }
}

interface Waiter {
  grant: () => void;
}
