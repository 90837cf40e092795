/**
 * `postgres://user@host:port/database?schema=name`: the connection for pg, and the schema
 * the deployment's tables live in (default `switchyard`). A password in the URL is refused:
 * worker.json is no place for it (PGPASSWORD, or ~/.pgpass, which pg reads itself).
 */
export function parsePgVolume(spec: string): { url: string; schema: string; shown: string } {
  let u: URL;
  try {
    u = new URL(spec);
  } catch {
    throw new Error(`volume ${JSON.stringify(spec)} is not a postgres:// URL`);
  }
  if (u.password !== '' || u.searchParams.has('password')) throw new Error('the postgres:// volume holds a password: give it by PGPASSWORD (or ~/.pgpass), never in worker.json');
  const schema = u.searchParams.get('schema') ?? 'switchyard';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`volume schema ${JSON.stringify(schema)}: lower-case letters, digits and _, starting with a letter or _`);
  u.searchParams.delete('schema');
  return { url: u.toString(), schema, shown: `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}?schema=${schema}` };
}

/** Whether a volume spec names PostgreSQL. */
export function isPgVolume(spec: string): boolean {
  return /^postgres(ql)?:\/\//.test(spec);
}
