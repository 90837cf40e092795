import * as v from 'valibot';
import { HOP_BY_HOP } from '../shared/hop-by-hop.js';
import { FIELD_VALUE } from '../shared/field-value.js';

const Name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be a header name'));
const Value = v.pipe(v.string(), v.regex(FIELD_VALUE, 'must be a header value: no control characters'));

/**
 * Names a step may not set or add: the message's framing (the gateway writes its own
 * Content-Length or chunked coding; a second one corrupts the message) and the
 * connection's own (hop-by-hop) headers. Removing them is harmless and allowed.
 */
const MANAGED = new Set([...HOP_BY_HOP, 'content-length']);
const Settable = v.pipe(Name, v.check((n) => !MANAGED.has(n.toLowerCase()), 'is managed by the gateway (framing or hop-by-hop): it cannot be set'));

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
