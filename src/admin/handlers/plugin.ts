import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';

/** The steps the tenant may use (a package step only where worker.json `steps.tenants` allows it), each with its state. */
export const list: OpHandler<Services> = async ({ params, services }) => {
  const disabled = await services.plugins.disabled(params.tenant!);
  return { tenant: params.tenant, items: services.steps.catalog(params.tenant!).map((s) => ({ ...s, enabled: !disabled.has(s.code) })) };
};

function lifecycle(enabled: boolean): OpHandler<Services> {
  return async ({ params, services }) => {
    const code = params.code!;
    // A package step the tenant may not use is no step of its own, as plugin list shows it.
    if (!services.steps.has(code) || !services.steps.usableBy(code, params.tenant!)) throw new SvcError('Svc.Plugin.NotFound', `No step ${code}; plugin list shows the codes`);
    await services.plugins.setEnabled(params.tenant!, code, enabled);
    return { tenant: params.tenant, code, enabled, appliesAt: 'the next dry-run or publish' };
  };
}

export const enable = lifecycle(true);
export const disable = lifecycle(false);
