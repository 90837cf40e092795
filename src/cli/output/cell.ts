/** C0 and C1 control characters: a terminal would act on them (colours, titles, cursor moves). */
export const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/**
 * Text that reaches a terminal as text: control characters shown as \u escapes. Names, labels
 * and messages come from the admin port and may hold what a tenant wrote (a key's name).
 */
export function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    out += isControl(code) ? `\\u${code.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}

/** One value as table or summary text: null as "-", lists joined, small objects as key=value. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map((v) => (isPlainObject(v) ? inline(v) : cell(v))).join(', ');
  if (isPlainObject(value)) return inline(value);
  return printable(String(value));
}

function inline(obj: Record<string, unknown>): string {
  return Object.entries(obj)
    .map(([k, v]) => printable(`${k}=${isPlainObject(v) || Array.isArray(v) ? JSON.stringify(v) : String(v)}`))
    .join(' ');
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A dotted path into an object: `identity.id`. */
export function pick(obj: unknown, path: string): unknown {
  let v: unknown = obj;
  for (const part of path.split('.')) v = isPlainObject(v) ? v[part] : undefined;
  return v;
}

/** `publishedGeneration` -> `PUBLISHED GENERATION`, `identity.id` -> `IDENTITY ID`. */
export function header(path: string): string {
  return path
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/\./g, ' ')
    .toUpperCase();
}
