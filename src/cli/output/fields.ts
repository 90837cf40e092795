import { isPlainObject, pick } from './cell.js';

/**
 * `--json name,state`: those fields of each row of a list answer (`listKey`, when it is an
 * array), else of the answer itself. Dotted paths reach into objects (`identity.id`).
 */
export function selectFields(body: unknown, fields: readonly string[], listKey = 'items'): unknown {
  const one = (row: unknown) => Object.fromEntries(fields.map((f) => [f, pick(row, f) ?? null]));
  if (isPlainObject(body) && Array.isArray(body[listKey])) return (body[listKey] as unknown[]).map(one);
  if (Array.isArray(body)) return body.map(one);
  return one(body);
}
