import type { GenerationMessage } from '../contracts/ipc.js';
import type { WorkerPool } from './worker-pool.js';
import type { Logger } from '../shared/logger.js';
import type { Worker } from 'node:cluster';

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
  // The process each message went to: a slot's worker may die and be replaced meanwhile.
  const sentTo = new Map(targets.map((s) => [s.slot, s.worker!]));
  const waiting = new Set(targets.map((s) => s.slot));
  const result: BroadcastResult = { ok: true, acked: [], failed: [] };
  if (waiting.size === 0) return Promise.resolve(result);
  return new Promise((resolve) => {
    const exitWatchers: [Worker, () => void][] = [];
    const finish = () => {
      off();
      clearTimeout(timer);
      for (const [w, onExit] of exitWatchers) w.off('exit', onExit);
      for (const slot of waiting) result.failed.push({ slot, reason: `no ack within ${timeoutMs} ms` });
      for (const f of result.failed) {
        log.error({ slot: f.slot, generation: gen.id, reason: f.reason }, 'worker did not load the generation; restarting it');
        // Only the process that failed: never a replacement that booted with the generation.
        const w = sentTo.get(f.slot);
        if (w && pool.slots[f.slot]?.worker === w) w.process.kill('SIGKILL');
      }
      result.ok = result.failed.length === 0;
      resolve(result);
    };
    const off = pool.onWorkerMessage((slot, msg, from) => {
      // Only the process the generation went to: not a replacement starting (it boots with the generation) nor one replaced.
      if (!waiting.has(slot) || sentTo.get(slot) !== from) return;
      if (msg.type === 'ack' && msg.generation === gen.id) {
        waiting.delete(slot);
        result.acked.push(slot);
      } else if (msg.type === 'nack' && msg.generation === gen.id) {
        waiting.delete(slot);
        result.failed.push({ slot, reason: msg.error.message });
      } else return;
      if (waiting.size === 0) finish();
    });
    // A worker that dies before it acks is respawned, and its replacement boots with the
    // committed generation (the pool's current one): nothing to wait for.
    for (const [slot, w] of sentTo) {
      const onExit = () => {
        if (!waiting.delete(slot)) return;
        log.warn({ slot, generation: gen.id }, 'worker exited during the publish; its replacement starts with this generation');
        if (waiting.size === 0) finish();
      };
      w.once('exit', onExit);
      exitWatchers.push([w, onExit]);
    }
    const timer = setTimeout(finish, timeoutMs);
    for (const s of targets) pool.send(s, { type: 'generation', generation: gen });
  });
}
