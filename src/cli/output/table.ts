import { cell, header, pick } from './cell.js';

/** A column: a dotted path into each row, or a path with its own text (`format`). */
export interface Column {
  path: string;
  title?: string;
  format?: (value: unknown, row: unknown) => string;
}

export type ColumnSpec = string | Column;

const MAX_CELL = 60;

/** An aligned text table, a header line first; cells wider than MAX_CELL end with "…". */
export function table(rows: readonly unknown[], specs: readonly ColumnSpec[]): string {
  const columns = specs.map((s) => (typeof s === 'string' ? { path: s } : s));
  const lines = [columns.map((c) => c.title ?? header(c.path))];
  for (const row of rows) {
    lines.push(
      columns.map((c) => {
        const v = pick(row, c.path);
        const text = (c.format ? c.format(v, row) : cell(v)).replace(/\s+/g, ' ');
        return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
      }),
    );
  }
  const widths = columns.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((text, i) => (i === l.length - 1 ? text : text.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** The columns of a list whose rows have no declared view: every field that is not an object or a long list. */
export function defaultColumns(rows: readonly unknown[]): string[] {
  const first = rows.find((r) => typeof r === 'object' && r !== null) as Record<string, unknown> | undefined;
  if (!first) return [];
  return Object.keys(first).filter((k) => {
    const v = first[k];
    return v === null || typeof v !== 'object' || (Array.isArray(v) && v.every((x) => typeof x !== 'object'));
  });
}
