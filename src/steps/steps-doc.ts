import { toJsonSchema } from '@valibot/to-json-schema';
import { STEPS } from './registry.js';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  minItems?: number;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
};

function typeOf(s: Schema): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(' \\| ');
  if (s.enum) return s.enum.map((e) => JSON.stringify(e)).join(' \\| ');
  if (s.type === 'array') return `array of ${s.items ? typeOf(s.items) : 'any'}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') return `map of ${typeOf(s.additionalProperties)}`;
  return Array.isArray(s.type) ? s.type.join(' \\| ') : (s.type ?? 'any');
}

function constraints(s: Schema): string {
  const c: string[] = [];
  if (s.minimum !== undefined) c.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) c.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) c.push(`≤ ${s.maximum}`);
  if (s.minItems !== undefined) c.push(`at least ${s.minItems}`);
  if (s.pattern !== undefined) c.push(`matches \`${s.pattern.replace(/\|/g, '\\|')}\``);
  return c.join(', ');
}

/**
 * One row per setting, and one per field of a setting that is an object (`abort.status`)
 * or a list of objects (`keys[].sha256`), so nested settings are documented too.
 */
function settingRows(schema: Schema, prefix: string): string[] {
  const rows: string[] = [];
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const required = (schema.required ?? []).includes(name) ? 'yes' : 'no';
    const def = p.default === undefined ? '' : `\`${JSON.stringify(p.default)}\``;
    const path = `${prefix}${name}`;
    rows.push(`| \`${path}\` | ${typeOf(p)} | ${required} | ${def} | ${constraints(p)} |`);
    if (p.type === 'object' && p.properties) rows.push(...settingRows(p, `${path}.`));
    else if (p.type === 'array' && p.items?.type === 'object' && p.items.properties) rows.push(...settingRows(p.items, `${path}[].`));
  }
  return rows;
}

/**
 * docs/steps.md, rendered from the step registry: the settings tables come from each
 * step's schema, so the page cannot drift from what the compiler accepts (a unit test
 * compares the file with this output).
 */
export function renderStepsDoc(): string {
  const out: string[] = [
    '# Built-in steps',
    '',
    'Generated from the step registry (`src/steps/`) by `npm run docs:steps`; a test fails when this page and the schemas disagree.',
    'Steps run on `cluster` routes, in order, before the proxy stage; the first step that answers ends the chain (FailFast); a chain node with `failureStrategy: "Continue"` logs its refusals and the chain goes on, while a served answer (a granted CORS preflight, a cache hit, echo) still ends it.',
    'Unknown settings are compile issues, like settings of the wrong type; every issue names a JSON pointer.',
    'Any step (a route\'s `steps[i]`, a chain\'s `nodes[i]`) may carry `timeoutMs` (1 to 30000) beside its settings: the budget of its work on a request, past which the request is answered 504 `Svc.Data.StepTimeout` ([Step budgets](reference.md#step-budgets)). State a step keeps (a cache\'s answers, a circuit, an auth memo) outlives publishes that leave the step unchanged ([Step state across publishes](reference.md#step-state-across-publishes)).',
    '',
  ];
  for (const s of [...STEPS.values()].sort((a, b) => a.code.localeCompare(b.code))) {
    const schema = toJsonSchema(s.schema, { errorMode: 'ignore' }) as Schema;
    out.push(`## \`${s.code}\``, '', `${s.summary}.`, '');
    if (s.details) out.push(s.details, '');
    if (Object.keys(schema.properties ?? {}).length) {
      out.push('| setting | type | required | default | constraints |', '|---|---|---|---|---|');
      out.push(...settingRows(schema, ''));
    } else out.push('No settings.');
    out.push('');
    if (s.statuses.length) {
      out.push('Answers:', '');
      for (const st of s.statuses) out.push(`- ${st.status === 0 ? 'the configured status' : `**${st.status}**`}: ${st.when}.`);
      out.push('');
    }
    out.push('Example:', '', '```json', JSON.stringify({ code: s.code, settings: s.example }), '```', '');
  }
  return out.join('\n');
}
