import type { FleetHooks, StoreDb } from '../contracts/store-db.js';
import { SvcError } from '../shared/errors.js';

/** Thrown to give up a transaction that did not get the fleet's publish lock. */
const FLEET_BUSY = Symbol('fleet busy');
const FLEET_LOCK_WAIT_MS = 30_000;

/**
 * `fn` in one transaction holding the fleet's publish lock (on a shared store): while another
 * node's publish holds it, the transaction (and its connection) is given up and tried again a
 * few ms later, waiting asynchronously, for at most FLEET_LOCK_WAIT_MS. The transaction is
 * one of `tenant`'s writes (queued with the node's others of that tenant).
 */
export async function publishLocked<T>(db: StoreDb, fleet: FleetHooks | null, tenant: string, fn: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + FLEET_LOCK_WAIT_MS;
  for (;;) {
    try {
      return await db.transaction(async () => {
        if (fleet && !(await fleet.tryLockPublish())) throw FLEET_BUSY;
        return fn();
      }, { tenant });
    } catch (err) {
      if (err !== FLEET_BUSY) throw err;
      if (Date.now() > giveUpAt) throw new SvcError('Svc.Store.Unavailable', `Another node has been publishing for ${FLEET_LOCK_WAIT_MS / 1000} s; try again`);
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 30));
    }
  }
}
