import pg from 'pg';
import { spawn, spawnSync } from 'node:child_process';
import { freePorts } from './ports.js';
import type { TestContext } from 'node:test';
import { startGateway, newToken, type Gateway } from './gateway.js';
import { freshSchema, pgVolumeUrl } from './volumes.js';
import type { Json } from './json.js';

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
export async function startFleet(t: TestContext, n: number, workers = 1, edit?: (config: Record<string, Json>) => void): Promise<Fleet> {
  const schema = freshSchema();
  const volume = pgVolumeUrl(schema);
  const token = newToken();
  const nodes: Gateway[] = [];
  const add = async () => {
    const gw = await startGateway(t, { volume, workers, keys: [{ id: 'root', scopes: ['*'], token }], ...(edit ? { edit } : {}) });
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

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A redis-server of the test's own on a free port, nothing on disk: stopping it touches no other test. */
export async function startRedis(t: TestContext): Promise<RedisServer> {
  const [port] = await freePorts(1);
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    proc.kill('SIGKILL');
    await exited;
  };
  t.after(stop);
  for (let i = 0; i < 100; i++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().trim() === 'PONG') return { url: `redis://127.0.0.1:${port}`, port: port!, stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on ${port} did not answer`);
}
