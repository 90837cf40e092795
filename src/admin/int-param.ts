import { SvcError } from '../shared/errors.js';

/** Plain decimal digits only: `Number()` would also take `0x1`, `1e0`, `1.0` and ` 1`. */
const DIGITS = /^\d+$/;

function inRange(raw: string, min: number, max: number): number | null {
  if (!DIGITS.test(raw)) return null;
  const n = Number(raw);
  return n >= min && n <= max && Number.isSafeInteger(n) ? n : null;
}

/** An integer query parameter from min to max; null when absent. 400 Svc.Request.BadQuery otherwise. */
export function intQuery(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const raw = query.get(name);
  if (raw === null) return null;
  const n = inRange(raw, min, max);
  if (n === null) throw new SvcError('Svc.Request.BadQuery', `${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** An integer path segment of at least min (a generation number, …). 400 Svc.Request.BadParam otherwise. */
export function intSegment(raw: string | undefined, what: string, min = 1): number {
  const n = raw === undefined ? null : inRange(raw, min, Number.MAX_SAFE_INTEGER);
  if (n === null) throw new SvcError('Svc.Request.BadParam', `Invalid ${what} ${JSON.stringify(raw)}: an integer of at least ${min} is expected`);
  return n;
}
