import type { OpHandler } from '../op-context.js';
import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';
import { STEPS, stepCatalog } from '../../steps/registry.js';

export const list: OpHandler<Services> = ({ params, services }) => {
  const disabled = services.plugins.disabled(params.tenant!);
  return { tenant: params.tenant, items: stepCatalog().map((s) => ({ ...s, enabled: !disabled.has(s.code) })) };
};

function lifecycle(enabled: boolean): OpHandler<Services> {
  return ({ params, services }) => {
    const code = params.code!;
    if (!STEPS.has(code)) throw new SvcError('Svc.Plugin.NotFound', `No step ${code}; plugin list shows the codes`);
    services.plugins.setEnabled(params.tenant!, code, enabled);
    return { tenant: params.tenant, code, enabled, appliesAt: 'the next dry-run or publish' };
  };
}

export const enable = lifecycle(true);
export const disable = lifecycle(false);
