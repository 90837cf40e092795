import pg from 'pg';
import type { TestContext } from 'node:test';
import { startGateway, newToken, type Gateway } from './gateway.js';
import { freshSchema, pgVolumeUrl } from './volumes.js';

/** Runs SQL on the machine's PostgreSQL, outside any gateway. */
export async function pgRun(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: pgVolumeUrl('x').replace(/\?.*$/, '') });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export interface Fleet {
  schema: string;
  volume: string;
  token: string;
  nodes: Gateway[];
  /** Starts one more node on the fleet's volume (same root token). */
  add(): Promise<Gateway>;
}

/** `n` gateway nodes on one fresh PostgreSQL schema, each with `workers` workers; the schema is dropped afterwards. */
export async function startFleet(t: TestContext, n: number, workers = 1): Promise<Fleet> {
  const schema = freshSchema();
  const volume = pgVolumeUrl(schema);
  const token = newToken();
  const nodes: Gateway[] = [];
  const add = async () => {
    const gw = await startGateway(t, { volume, workers, keys: [{ id: 'root', scopes: ['*'], token }] });
    nodes.push(gw);
    return gw;
  };
  t.after(async () => {
    for (const gw of nodes) gw.kill();
    await Promise.all(nodes.map((gw) => gw.exited));
    await pgRun(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
  for (let i = 0; i < n; i++) await add();
  return { schema, volume, token, nodes, add };
}
