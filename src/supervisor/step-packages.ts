import type { StepPackagesSettings } from '../contracts/ipc.js';
import { loadStepRegistry, resolvePackageDirs } from '../steps/packages/load-packages.js';
import type { StepRegistry } from '../steps/step-registry.js';
import { renderPackageStepsDoc } from '../steps/steps-doc.js';

/**
 * worker.json `steps` loaded as `run` loads them (and `validate` and `step docs` too, so the
 * three cannot disagree): the registry, and the packages' folders the workers load the same
 * from. Rejects with the first problem (a missing package, a bad definition, a code clash).
 */
export async function loadGatewaySteps(steps: { packages: string[]; tenants: Record<string, string[]> }, baseDir: string): Promise<{ registry: StepRegistry; settings: StepPackagesSettings }> {
  const settings = { dirs: resolvePackageDirs(steps.packages, baseDir), tenants: steps.tenants };
  return { registry: await loadStepRegistry(settings), settings };
}

/** `switchyard step docs`: the installed package steps' docs, as Markdown. */
export async function packageStepsDoc(steps: { packages: string[]; tenants: Record<string, string[]> }, baseDir: string): Promise<string> {
  return renderPackageStepsDoc((await loadGatewaySteps(steps, baseDir)).registry);
}
