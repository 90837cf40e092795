/**
 * Multi-row statements: a write of many rows is a few statements (one per CHUNK rows), not
 * one per row, so a sync costs a few round trips to a distant PostgreSQL. Written in the
 * dialect both volumes read; CHUNK rows of up to 5 values stay far under either's limit on
 * bound values (SQLite 32766, PostgreSQL 65535).
 */
export const CHUNK = 100;

export function chunks<T>(rows: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** `(?, ?), (?, ?)`: `rows` tuples of `width` placeholders, for a VALUES list. */
export function tuples(rows: number, width: number): string {
  const one = `(${new Array<string>(width).fill('?').join(', ')})`;
  return new Array<string>(rows).fill(one).join(', ');
}

/** `(term) OR (term)`: `rows` copies of a condition, for a DELETE of many keys. */
export function anyOf(rows: number, term: string): string {
  return new Array<string>(rows).fill(`(${term})`).join(' OR ');
}
