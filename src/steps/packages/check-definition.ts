import * as v from 'valibot';
import type { StepDefinition as PackageStep } from '../../sdk/step.js';

export const STEP_CODE = /^[a-z][a-z0-9-]{1,62}$/;
/** A package step's budget: its default and its ceiling, in ms. */
export const PACKAGE_STEP_MAX_TIMEOUT_MS = 30_000;

/**
 * What is wrong with a package's default export entry, as sentences ([] when it is a
 * usable step): checked at load, so a bad package stops the start, never a publish.
 */
export function definitionProblems(def: unknown): string[] {
  if (def === null || typeof def !== 'object') return ['is not a step definition (defineStep({...}))'];
  const d = def as Partial<Record<keyof PackageStep, unknown>>;
  const out: string[] = [];
  if (typeof d.code !== 'string' || !STEP_CODE.test(d.code)) out.push(`code ${JSON.stringify(d.code)} must match ${STEP_CODE.source}`);
  if (typeof d.summary !== 'string' || d.summary.length === 0) out.push('summary must be a non-empty string');
  if (typeof d.create !== 'function') out.push('create must be a function (settings, env) => handler');
  if (!isSchema(d.settings)) out.push("settings must be a valibot schema (import { v } from 'switchyard/step')");
  if (!Array.isArray(d.answers)) out.push('answers must be an array ([] when the step never answers)');
  else d.answers.forEach((a: unknown, i) => out.push(...answerProblems(a, i)));
  for (const f of ['clusters', 'secrets', 'ownedHeaders'] as const) if (d[f] !== undefined && typeof d[f] !== 'function') out.push(`${f} must be a function of the settings`);
  if (d.docs !== undefined && typeof d.docs !== 'string') out.push('docs must be a string (Markdown)');
  if (d.pure !== undefined && typeof d.pure !== 'boolean') out.push('pure must be a boolean');
  if (d.timeoutMs !== undefined && !(Number.isInteger(d.timeoutMs) && (d.timeoutMs as number) > 0 && (d.timeoutMs as number) <= PACKAGE_STEP_MAX_TIMEOUT_MS)) {
    out.push(`timeoutMs must be an integer from 1 to ${PACKAGE_STEP_MAX_TIMEOUT_MS}`);
  }
  if (d.example !== undefined && (d.example === null || typeof d.example !== 'object' || Array.isArray(d.example))) out.push('example must be an object of settings');
  else if (d.example !== undefined && isSchema(d.settings)) {
    const r = v.safeParse(d.settings, d.example);
    if (!r.success) out.push(`example does not pass the settings schema: ${r.issues.map((i) => `${v.getDotPath(i) ?? '(settings)'}: ${i.message}`).join('; ')}`);
  }
  return out;
}

function answerProblems(a: unknown, i: number): string[] {
  const x = (a ?? {}) as { status?: unknown; code?: unknown; when?: unknown };
  const out: string[] = [];
  if (!Number.isInteger(x.status) || (x.status as number) < 200 || (x.status as number) > 599) out.push(`answers[${i}].status must be an HTTP status from 200 to 599`);
  if (typeof x.code !== 'string' || !/^[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)+$/.test(x.code)) out.push(`answers[${i}].code must look like Pkg.Reason`);
  else if (x.code.startsWith('Svc.') || x.code.startsWith('Compile.')) out.push(`answers[${i}].code ${x.code}: Svc. and Compile. codes are the gateway's own`);
  if (typeof x.when !== 'string' || x.when.length === 0) out.push(`answers[${i}].when must say when the step gives it`);
  return out;
}

/** A valibot schema: an object of kind 'schema' with valibot's run method (any copy of valibot 1.x). */
function isSchema(s: unknown): s is v.GenericSchema {
  return s !== null && typeof s === 'object' && (s as { kind?: unknown }).kind === 'schema' && typeof (s as Record<string, unknown>)['~run'] === 'function';
}
