import { cell, isPlainObject, printable } from './cell.js';
import { defaultColumns, table, type ColumnSpec } from './table.js';

/** How a command's answer reads on a terminal; without one, every answer has a generic reading. */
export interface View {
  /** The field holding the list shown as a table (default: `items`, when it is an array). */
  list?: string;
  columns?: readonly ColumnSpec[];
  /** Fields left out of the summary above the table. */
  hide?: readonly string[];
  /** A line under the table (the next page, a hint), or null. */
  footer?: (body: Record<string, unknown>) => string | null;
}

const NESTED_DEPTH = 2;

/** An answer for people: scalar fields as aligned `key: value` lines, then the list as a table. */
export function renderHuman(body: unknown, view: View = {}): string {
  if (!isPlainObject(body)) return cell(body);
  const listKey = view.list ?? 'items';
  const list = Array.isArray(body[listKey]) ? (body[listKey] as unknown[]) : null;
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => (list === null || k !== listKey) && !view.hide?.includes(k)));
  const parts: string[] = [];
  const head = summary(rest, 0);
  if (head !== '') parts.push(head);
  if (list !== null) {
    parts.push(list.length === 0 ? '(none)' : table(list, view.columns ?? defaultColumns(list)));
    const foot = view.footer?.(body);
    if (foot) parts.push(foot);
  }
  return parts.join('\n\n');
}

/** Aligned `key: value` lines; nested objects indented below their key, deeper ones as JSON. */
export function summary(obj: Record<string, unknown>, depth: number): string {
  const pad = '  '.repeat(depth);
  const width = Math.max(0, ...Object.keys(obj).map((k) => k.length + 1));
  const lines: string[] = [];
  for (const [rawKey, v] of Object.entries(obj)) {
    const k = printable(rawKey);
    const key = `${pad}${`${k}:`.padEnd(width)}`;
    if (isPlainObject(v) && Object.keys(v).length > 0) {
      if (depth + 1 >= NESTED_DEPTH) lines.push(`${key} ${printable(JSON.stringify(v))}`);
      else lines.push(`${pad}${k}:`, summary(v, depth + 1));
    } else if (Array.isArray(v) && v.length > 0 && v.every(isPlainObject)) {
      lines.push(`${pad}${k}:`, indent(table(v, defaultColumns(v)), `${pad}  `));
    } else lines.push(`${key} ${cell(v)}`);
  }
  return lines.join('\n');
}

function indent(text: string, pad: string): string {
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}
