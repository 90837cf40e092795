import type { Logger } from '../shared/logger.js';
import type { StepRegistry } from '../steps/step-registry.js';
import type { Publisher } from './publisher.js';

/**
 * At start: the served generation compiled again with the packages loaded now. When they
 * refuse it, the stored generation serves as it is, and the routes whose step builds differ
 * answer 503 Svc.Data.RouteUnavailable until a publish fixes them (logged here).
 */
export async function restampAtStart(publisher: Publisher, steps: StepRegistry, log: Logger): Promise<void> {
  try {
    if (await publisher.takeSteps(steps)) log.info({ generation: publisher.currentId() }, 'the served generation is stamped with the step packages loaded now');
  } catch (err) {
    const issues = (err as { extra?: { issues?: unknown } }).extra?.issues;
    log.error({ generation: publisher.currentId(), issues }, 'the step packages loaded now refuse the published configuration: routes using their steps answer 503 until a publish fixes them');
  }
}

/** `workers restart`: worker.json's packages read again; the restart fails, replacing no worker, when they cannot load or refuse what is published. */
export async function reloadSteps(publisher: Publisher, steps: StepRegistry, log: Logger): Promise<void> {
  const next = await steps.reloaded();
  const changed = await publisher.takeSteps(next);
  log.info({ steps: steps.packageSteps().map((s) => `${s.code} ${s.origin!.package}@${s.origin!.version}#${s.origin!.hash.slice(0, 12)}`), changed }, 'step packages read again for the restart');
}
