import * as v from 'valibot';
import { MANAGED_HEADERS } from '../shared/hop-by-hop.js';
import { FIELD_VALUE } from '../shared/field-value.js';

const Name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name'));
const Value = v.pipe(v.string(), v.regex(FIELD_VALUE, 'must be a header value: no control characters'));

/** Names a step may not set or add (MANAGED_HEADERS); removing them is harmless and allowed. */
const Settable = v.pipe(Name, v.check((n) => !MANAGED_HEADERS.has(n.toLowerCase()), 'is managed by the gateway (framing or hop-by-hop): it cannot be set'));

/** The settings of request-headers and response-headers: set (replace), add (append) and remove, applied in that order. */
export const HeaderEditSettings = v.strictObject({
  set: v.optional(v.record(Settable, Value), {}),
  add: v.optional(v.record(Settable, Value), {}),
  remove: v.optional(v.array(Name), []),
});

export type HeaderEditSettings = v.InferOutput<typeof HeaderEditSettings>;

export function lowerEntries(r: Record<string, string>): [string, string][] {
  return Object.entries(r).map(([k, val]) => [k.toLowerCase(), val]);
}
