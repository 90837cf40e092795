import type { GenerationMessage } from '../shared/ipc.js';
import type { WorkerPool } from './worker-pool.js';
import type { Logger } from '../shared/logger.js';

export interface BroadcastResult {
  ok: boolean;
  acked: number[];
  /** Slots that did not acknowledge in time or failed to build (they are restarted). */
  failed: { slot: number; reason: string }[];
}

/**
 * Sends a generation to every live worker and waits for every ack. A worker that does
 * not ack in time, or fails to build the generation, is killed: the pool respawns it
 * and hands it the current generation before it listens, so the node converges.
 */
export function broadcastGeneration(pool: WorkerPool, gen: GenerationMessage, timeoutMs: number, log: Logger): Promise<BroadcastResult> {
  const targets = pool.live();
  const waiting = new Set(targets.map((s) => s.slot));
  const result: BroadcastResult = { ok: true, acked: [], failed: [] };
  if (waiting.size === 0) return Promise.resolve(result);
  return new Promise((resolve) => {
    const finish = () => {
      off();
      clearTimeout(timer);
      for (const slot of waiting) result.failed.push({ slot, reason: `no ack within ${timeoutMs} ms` });
      for (const f of result.failed) {
        log.error({ slot: f.slot, generation: gen.id, reason: f.reason }, 'worker did not load the generation; restarting it');
        pool.slots[f.slot]?.worker?.process.kill('SIGKILL');
      }
      result.ok = result.failed.length === 0;
      resolve(result);
    };
    const off = pool.onWorkerMessage((slot, msg) => {
      if (!waiting.has(slot)) return;
      if (msg.type === 'ack' && msg.generation === gen.id) {
        waiting.delete(slot);
        result.acked.push(slot);
      } else if (msg.type === 'nack' && msg.generation === gen.id) {
        waiting.delete(slot);
        result.failed.push({ slot, reason: msg.error.message });
      } else return;
      if (waiting.size === 0) finish();
    });
    const timer = setTimeout(finish, timeoutMs);
    for (const s of targets) pool.send(s, { type: 'generation', generation: gen });
  });
}
