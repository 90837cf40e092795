import type { WorkerContext } from './worker-context.js';

/** At most one line a second for faults that repeat per request (a step's floating call on every request). */
const LOG_EVERY_MS = 1_000;

/**
 * What a worker does with a fault no request owns, once it serves:
 *  - a promise that rejects with nobody awaiting it (a step's floating call) is logged with the
 *    step last started (a line a second at most, with the count meanwhile); nothing else is
 *    wrong with the worker, so it serves on, where Node would end it;
 *  - an exception out of a callback (a step's timer) leaves its state no longer known good: it
 *    asks the supervisor to replace it after a drain, and serves until then.
 * Before it serves (its start), either ends the worker, as Node would: the supervisor sees a start that failed.
 */
export function watchProcessFaults(ctx: WorkerContext): void {
  let loggedAt = 0;
  let unlogged = 0;
  process.on('unhandledRejection', (err) => {
    if (ctx.server === null) return startFailed(err);
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return void unlogged++;
    ctx.log.error({ err, lastStep: ctx.lastStep(), alsoSince: unlogged }, "a promise rejected unhandled (a step's floating call?); the worker serves on");
    loggedAt = now;
    unlogged = 0;
  });
  process.on('uncaughtException', (err) => {
    if (ctx.server === null) return startFailed(err);
    ctx.log.error({ err, lastStep: ctx.lastStep() }, "uncaught exception (a step's callback?); the worker is replaced after a drain");
    // Told once; the supervisor also remembers it for a worker it could not replace yet.
    if (!ctx.faulted) ctx.send({ type: 'faulted' });
    ctx.faulted = true;
  });
}

/** The worker's start failed: logged, and the worker ends so the supervisor sees it (its respawn backs off). */
export function startFailed(err: unknown): never {
  process.stderr.write(`switchyard worker: start failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
}
