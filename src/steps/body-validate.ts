import * as v from 'valibot';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { defineStep, type StepOutcome } from './step.js';
import { stepError } from './reply.js';
import { compileLinear, PatternRefused } from './linear-regex.js';

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv, formats: readonly string[]) => Ajv;

const compiled = new Map<string, ValidateFunction>();

/**
 * JSON Schema's format vocabulary as ajv-formats checks it, without `url`: its pattern
 * backtracks with the square of the input, and it runs on
 * client input. A schema naming `url` is a compile issue; `uri` is the standard name.
 */
const FORMATS = Object.keys(fullFormats).filter((name) => name !== 'url');

/** ajv warns, and ignores the keyword, for a format it does not know: refuse the schema instead. */
const strictFormats = {
  log() {},
  warn(...args: unknown[]) {
    const msg = String(args[0]);
    if (msg.startsWith('unknown format')) throw new Error(msg);
  },
  error() {},
};

/** RE2 instructions of every pattern of one schema, together. */
const MAX_SCHEMA_PROGRAM = 10_000;
/** The schema being compiled's instructions so far (ajv compiles synchronously, one schema at a time). */
let schemaProgram = 0;

/**
 * ajv's RegExp engine for `pattern` and `patternProperties`: RE2's linear-time matcher,
 * so no schema pattern can make a body take exponential time. Unanchored, as `test`.
 */
const linearRegExp = Object.assign(
  (pattern: string, u: string) => {
    let re: ReturnType<typeof compileLinear>;
    try {
      re = compileLinear(pattern, { unicode: u === 'u' });
    } catch (err) {
      throw err instanceof PatternRefused ? new PatternRefused(`pattern ${JSON.stringify(pattern)} ${err.message}`) : err;
    }
    // A body's strings may meet every pattern: the schema's patterns share one budget.
    schemaProgram += re.programSize();
    if (schemaProgram > MAX_SCHEMA_PROGRAM) throw new PatternRefused(`patterns together compile to over ${MAX_SCHEMA_PROGRAM} RE2 instructions`);
    // ajv shares one compiled pattern per distinct toString() within a schema
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${u}` };
  },
  { code: 'linearRegExp' },
);

/** The first schema pattern the linear-time engine refuses, as a check message. */
function schemaIssue(schema: Record<string, unknown>): string {
  try {
    validatorOf(schema);
    return 'must be a valid JSON Schema';
  } catch (err) {
    return `must be a valid JSON Schema: ${(err as Error).message}`;
  }
}

/**
 * One compiled validator per distinct schema text, each in its own ajv instance: ajv
 * keeps every schema it compiles under its `$id`, so in a shared instance an edited
 * schema with the same `$id` could never compile again, and one tenant's `$ref` could
 * resolve to another tenant's schema. Bounded, because each dry-run, publish and
 * generation hands over new schema objects.
 */
export function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (fn === undefined) {
    if (compiled.size >= 256) compiled.clear();
    const ajv = new Ajv({ allErrors: true, strict: false, logger: strictFormats, code: { regExp: linearRegExp } });
    addFormats(ajv, FORMATS);
    schemaProgram = 0;
    fn = ajv.compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

/**
 * Validates a JSON request body against a JSON Schema (ajv, compiled once per
 * generation). 400 with the violations; 413 over `maxBytes`; 415 when the body is not
 * declared as JSON and `requireJson` is set. The upstream receives the same bytes.
 */
export const bodyValidate = defineStep({
  code: 'body-validate',
  summary: 'Validate a JSON request body against a JSON Schema (400 with the violations)',
  details: 'Each schema is compiled on its own (its `$id` and `$ref`s see no other schema). `format` is checked (ajv-formats: `date-time`, `email`, `uri`, `uuid`, `ipv4`, …); an unknown format is a compile issue, and so is `url`, whose check takes time growing with the square of the input: use `uri`. A body nested too deeply for a recursive schema gets 400. `pattern` and `patternProperties` are JavaScript regular expressions (as the `u` flag reads them) run on a linear-time engine (RE2): matching takes time in proportion to the string whatever the pattern. Backreferences, lookahead and lookbehind, atomic groups and possessive quantifiers are compile issues, and so are patterns over 1,000 characters or compiling to over 2,000 RE2 instructions, a schema whose patterns together compile to over 10,000, and letter escapes RE2 reads differently (`\\A`, `\\a`, `\\Q`, `\\pN`…: write the letter alone).',
  statuses: [
    { status: 400, when: 'the body is not JSON or violates the schema (`violations` lists them)' },
    { status: 413, when: 'the body is over maxBytes' },
    { status: 415, when: 'requireJson and the Content-Type is not application/json' },
  ],
  example: { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, maxBytes: 65536 },
  schema: v.strictObject({
    schema: v.pipe(
      v.record(v.string(), v.unknown()),
      v.check((s) => {
        try {
          validatorOf(s);
          return true;
        } catch {
          return false;
        }
      }, (issue) => schemaIssue(issue.input as Record<string, unknown>)),
    ),
    maxBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16 * 1024 * 1024)), 1024 * 1024),
    requireJson: v.optional(v.boolean(), true),
  }),
  touchesBody: 'reads the request body (a JSON document)',
  create(s) {
    const validate = validatorOf(s.schema);
    const tooLarge = stepError('Svc.Data.TooLarge', `The request body exceeds ${s.maxBytes} bytes`, { connection: 'close' });
    const notJson = stepError('Svc.Data.MediaType');
    return async (flow): Promise<StepOutcome> => {
      const type = (flow.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (s.requireJson && type !== 'application/json') return notJson;
      let raw: Buffer;
      try {
        raw = await flow.readBody(s.maxBytes);
      } catch {
        return tooLarge;
      }
      let doc: unknown;
      try {
        doc = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        return stepError('Svc.Data.BodyInvalid', `not JSON: ${(err as Error).message}`, undefined, { violations: [] });
      }
      let valid: boolean;
      try {
        valid = validate(doc) as boolean;
      } catch {
        // A recursive schema meets a deeply nested body: ajv's validator recurses with it.
        return stepError('Svc.Data.BodyInvalid', 'The request body is nested too deeply to validate', undefined, { violations: [] });
      }
      if (valid) return undefined;
      const violations = (validate.errors ?? []).map((e) => ({ pointer: e.instancePath, message: e.message ?? 'invalid' }));
      return stepError('Svc.Data.BodyInvalid', undefined, undefined, { violations });
    };
  },
});
