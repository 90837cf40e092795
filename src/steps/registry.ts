import { toJsonSchema } from '@valibot/to-json-schema';
import type { StepDefinition } from './step.js';
import { rateLimit } from './rate-limit.js';
import { orch } from './orch.js';

/** Every built-in step, by code. The compiler checks codes and settings against this. */
export const STEPS: ReadonlyMap<string, StepDefinition> = new Map(
  ([rateLimit, orch] as StepDefinition[]).map((s) => [s.code, s]),
);

/** The steps and their settings as JSON Schema, for the console's forms and docs. */
export function stepCatalog(): { code: string; summary: string; settingsSchema: unknown }[] {
  return [...STEPS.values()].map((s) => ({
    code: s.code,
    summary: s.summary,
    settingsSchema: toJsonSchema(s.schema, { errorMode: 'ignore' }),
  }));
}
