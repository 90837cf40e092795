import * as v from 'valibot';
import { pointer } from './json-pointer.js';

/** One way settings miss their schema: where (a pointer inside the settings, '' for them whole) and why. */
export interface SettingsIssue {
  pointer: string;
  message: string;
}

/**
 * A step's settings checked against its schema, with the wording publish uses
 * (Compile.Step.Settings) and the step SDK's tester repeats: one definition of both.
 */
export function checkStepSettings<S>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema of any input type: settings arrive as parsed JSON
  schema: v.GenericSchema<any, S>,
  settings: unknown,
): { ok: true; output: S } | { ok: false; issues: SettingsIssue[] } {
  const r = v.safeParse(schema, settings ?? {});
  if (r.success) return { ok: true, output: r.output };
  // A strict object's extra key fails as `never`: its own words say more.
  return { ok: false, issues: r.issues.map((i) => ({ pointer: pointer(i.path as { key: unknown }[] | undefined), message: i.expected === 'never' ? 'unknown setting' : i.message })) };
}
