import * as v from 'valibot';

const Name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name'));
const Value = v.pipe(v.string(), v.regex(/^[^\r\n\0]*$/, 'must not contain CR, LF or NUL'));

/** set (replace), add (append) and remove, applied in that order. Shared by request-headers and response-headers. */
export const HeaderEdits = v.strictObject({
  set: v.optional(v.record(Name, Value), {}),
  add: v.optional(v.record(Name, Value), {}),
  remove: v.optional(v.array(Name), []),
});

export type HeaderEdits = v.InferOutput<typeof HeaderEdits>;

export function lowerEntries(r: Record<string, string>): [string, string][] {
  return Object.entries(r).map(([k, val]) => [k.toLowerCase(), val]);
}
