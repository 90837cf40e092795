import type { StepPackagesSettings } from '../contracts/ipc.js';
import { loadStepRegistry, resolvePackageDirs } from '../steps/packages/load-packages.js';
import { StepPackageError } from '../steps/step-registry.js';
import type { StepRegistry } from '../steps/step-registry.js';
import { renderPackageStepsDoc } from '../steps/steps-doc.js';

/**
 * worker.json `steps` loaded as `run` loads them (and `validate` and `step docs` too, so the
 * three cannot disagree): the registry, and the packages' folders the workers load the same
 * from. Rejects with the first problem (a missing package, a bad definition, a code clash).
 */
export async function loadGatewaySteps(steps: { packages: string[]; tenants: Record<string, string[]> }, baseDir: string): Promise<{ registry: StepRegistry; settings: StepPackagesSettings }> {
  const settings = { dirs: resolvePackageDirs(steps.packages, baseDir), tenants: steps.tenants };
  const registry = await loadStepRegistry(settings);
  // A code in steps.tenants no package has is a typo that would quietly leave the step to `default` only.
  const unknown = Object.keys(steps.tenants).filter((code) => !registry.packageSteps().some((s) => s.code === code));
  if (unknown.length) throw new StepPackageError(`steps.tenants names ${unknown.map((c) => `"${c}"`).join(', ')}, which no installed step package has`);
  return { registry, settings };
}

/** `switchyard step docs`: the installed package steps' docs, as Markdown. */
export async function packageStepsDoc(steps: { packages: string[]; tenants: Record<string, string[]> }, baseDir: string): Promise<string> {
  return renderPackageStepsDoc((await loadGatewaySteps(steps, baseDir)).registry);
}
