/**
 * Reading a step's settings JSON Schema for the generated form: which widget a property
 * gets, how its text is parsed back, and the hint shown under it.
 */

import type { JsonSchema } from '../api';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'object' | 'json';

type Schema = JsonSchema;

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

const SCALAR_ITEMS = new Set(['string', 'number', 'integer']);

export function classify(s: unknown): FieldKind {
  if (!isObj(s)) return 'json';
  if (Array.isArray(s.enum) && s.enum.length) return 'enum';
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'array':
      return isObj(s.items) && SCALAR_ITEMS.has(s.items.type ?? '') ? 'list' : 'json';
    case 'object':
      return isObj(s.properties) && s.additionalProperties !== true && !isObj(s.additionalProperties) && !s.propertyNames
        ? 'object'
        : 'json';
    default:
      return 'json';
  }
}

/** True when `s` is an object schema the form can show field by field. */
export const isFieldObject = (s: unknown): s is Schema => classify(s) === 'object';

export type Parsed = { ok: true; value: unknown } | { ok: false; value: unknown; error: string };

/** A number field's text: '' removes the setting; text that is no number is kept as text. */
export function parseNumber(text: string, integer: boolean): Parsed {
  const t = text.trim();
  if (t === '') return { ok: true, value: undefined };
  const n = Number(t);
  if (!Number.isFinite(n)) return { ok: false, value: t, error: 'expected a number' };
  if (integer && !Number.isInteger(n)) return { ok: false, value: n, error: 'expected a whole number' };
  return { ok: true, value: n };
}

/**
 * A list field's text: one item a line. Never split on commas: list items are often
 * patterns (`^curl/\\d{1,3}`) or header lists that hold them, and an edit elsewhere in
 * the list must leave every other item exactly as it was.
 */
export function parseList(text: string, itemType: string): Parsed {
  const items = text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) return { ok: true, value: undefined };
  if (itemType === 'string') return { ok: true, value: items };
  const numbers = items.map((s) => parseNumber(s, itemType === 'integer'));
  const bad = items.filter((_s, i) => !numbers[i]!.ok);
  const value = numbers.map((p) => p.value);
  return bad.length ? { ok: false, value, error: `not ${itemType === 'integer' ? 'whole numbers' : 'numbers'}: ${bad.join(', ')}` } : { ok: true, value };
}

export function formatList(value: unknown): string {
  if (!Array.isArray(value)) return value === undefined ? '' : JSON.stringify(value);
  return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
}

export function parseJson(text: string): Parsed {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, value: undefined, error: 'not valid JSON (text goes in double quotes: "text")' };
  }
}

export const formatJson = (value: unknown) => (value === undefined ? '' : JSON.stringify(value, null, 2));

/** The default as placeholder text. */
export function placeholderOf(s: Schema | undefined, kind: FieldKind): string | undefined {
  if (!s || s.default === undefined) return undefined;
  if (kind === 'list') return formatList(s.default);
  if (kind === 'json') return JSON.stringify(s.default);
  if (typeof s.default === 'string' || typeof s.default === 'number') return String(s.default);
  return JSON.stringify(s.default);
}

/** A short description of what a field accepts (type, bounds, pattern, default). */
export function hintOf(s: Schema | undefined, kind: FieldKind): string {
  if (!s) return '';
  const parts: string[] = [];
  const range = (o: Schema) => {
    if (o.minimum !== undefined) parts.push(`≥ ${o.minimum}`);
    if (o.exclusiveMinimum !== undefined) parts.push(`> ${o.exclusiveMinimum}`);
    if (o.maximum !== undefined) parts.push(`≤ ${o.maximum}`);
    if (o.exclusiveMaximum !== undefined) parts.push(`< ${o.exclusiveMaximum}`);
  };
  if (kind === 'number' || kind === 'integer') {
    parts.push(kind === 'integer' ? 'whole number' : 'number');
    range(s);
  } else if (kind === 'list') {
    const items = s.items ?? {};
    parts.push(`list of ${items.type === 'integer' ? 'whole numbers' : items.type === 'number' ? 'numbers' : 'text'}, one a line`);
    if (Array.isArray(items.enum)) parts.push(`one of ${items.enum.join(', ')}`);
    if (s.minItems) parts.push(`at least ${s.minItems}`);
  } else if (kind === 'string') {
    if (s.format) parts.push(s.format);
    if (s.pattern) parts.push(`pattern ${s.pattern}`);
  } else if (kind === 'json') {
    parts.push('JSON');
  }
  if (s.default !== undefined && kind !== 'enum') parts.push(`default ${kind === 'list' ? formatList(s.default) : JSON.stringify(s.default)}`);
  if (typeof s.description === 'string') parts.unshift(s.description);
  return parts.join(' · ');
}

/** Structural equality for JSON values. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
