/**
 * Calls each identity has in progress on the admin port. A call being handled is never
 * closed for another connection (connection-budget.ts), so without this bound one token
 * sending bodies slowly could hold every admin connection and lock the operator out.
 */
export class CallsInProgress {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** A call of `id` begins: its release, or null when `id` already has `max` in progress. */
  enter(id: string): (() => void) | null {
    const n = this.open.get(id) ?? 0;
    if (n >= this.max) return null;
    this.open.set(id, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.open.get(id)! - 1;
      if (left === 0) this.open.delete(id);
      else this.open.set(id, left);
    };
  }
}
