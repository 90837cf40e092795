import type { StepBuild } from '../../contracts/generation.js';
import type { StepDefinition as PackageStep } from '../../sdk/step.js';
import type { StepDefinition } from '../step.js';
import { PACKAGE_STEP_MAX_TIMEOUT_MS } from './check-definition.js';
import { packageStepEnv } from './package-step-env.js';

/**
 * A checked package definition as the registry's internal StepDefinition: the compiler,
 * the worker, admin and the docs then treat it as they treat a built-in. `create` returns
 * the package's handler itself, so a package step costs its own work per request and
 * nothing of ours.
 */
export function adaptPackageStep(def: PackageStep, origin: StepBuild): StepDefinition {
  return {
    code: def.code,
    summary: def.summary,
    ...(def.docs === undefined ? {} : { details: def.docs }),
    statuses: def.answers.map((a) => ({ status: a.status, when: `${a.when} (\`${a.code}\`)` })),
    example: def.example ?? {},
    schema: def.settings,
    ...(def.clusters ? { clusterRefs: (s: unknown) => def.clusters!(s) } : {}),
    ...(def.secrets ? { envRefs: (s: unknown) => def.secrets!(s) } : {}),
    ...(def.ownedHeaders ? { ownedHeaders: (s: unknown) => def.ownedHeaders!(s) } : {}),
    timeoutMs: Math.min(def.timeoutMs ?? PACKAGE_STEP_MAX_TIMEOUT_MS, PACKAGE_STEP_MAX_TIMEOUT_MS),
    pure: def.pure === true,
    origin,
    create(settings, ctx) {
      const handler = def.create(settings, packageStepEnv(def, settings, ctx));
      if (typeof handler !== 'function') throw new Error(`step ${def.code} (package ${origin.package}): create returned no handler function`);
      return handler;
    },
  };
}
