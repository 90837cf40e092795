/** SQL text helpers of the PostgreSQL volume. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** better-sqlite3's `?` placeholders as PostgreSQL's `$1…` (the repositories' SQL has no `?` in literals). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
