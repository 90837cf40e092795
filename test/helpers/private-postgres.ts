import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import { freePort } from './ports.js';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';
const hasServer = (bin: string) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'));

/** PG_BIN, else the newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl (whatever version Debian installed); null when none does. */
function serverBin(): string | null {
  if (process.env.PG_BIN) return hasServer(process.env.PG_BIN) ? process.env.PG_BIN : null;
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => /^\d+$/.test(v)) : [];
  const bins = versions.sort((a, b) => Number(b) - Number(a)).map((v) => join(PG_ROOT, v, 'bin'));
  return bins.find(hasServer) ?? null;
}

const BIN = serverBin();

/**
 * A PostgreSQL server of the test's own, in a temporary folder on a free port, that the
 * test may stop and start again: the machine's shared server is never stopped. initdb
 * refuses root, so as root the server runs as the `postgres` OS user (runuser).
 */
export interface PrivatePostgres {
  port: number;
  /** A postgres:// volume URL on this server. */
  volumeUrl(schema: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The running server's processes by PID: the postmaster (from its pid file) and its children (from /proc), never found by name. */
  pids(): number[];
}

/** Why a private server cannot run here, or null when it can. */
export function privatePostgresMissing(): string | null {
  if (BIN === null) return process.env.PG_BIN ? `no initdb and pg_ctl in PG_BIN=${process.env.PG_BIN}` : `no PostgreSQL server binaries (initdb, pg_ctl) in ${PG_ROOT}/*/bin`;
  const me = userInfo().username;
  if (me !== 'postgres' && process.getuid?.() !== 0) return 'initdb needs to run as the postgres user (as root through runuser, or as postgres itself)';
  return null;
}

/**
 * A test's `skip` for a private server: the reason on a developer's machine that lacks one,
 * never under CI=true, where scripts/install-test-packages.sh installs the server, so a
 * missing one fails the test (startPrivatePostgres throws the reason) rather than passing unseen.
 */
export function privatePostgresSkip(): string | false {
  return process.env.CI === 'true' ? false : (privatePostgresMissing() ?? false);
}

export async function startPrivatePostgres(t: TestContext): Promise<PrivatePostgres> {
  const missing = privatePostgresMissing();
  const bin = BIN;
  if (missing !== null || bin === null) throw new Error(`a private PostgreSQL server cannot run here: ${missing}`);
  const asRoot = process.getuid?.() === 0;
  const pgUser = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  const dir = mkdtempSync(join(tmpdir(), 'sy-pg-'));
  if (asRoot) {
    const ids = (await run('id', ['-u', 'postgres'])).stdout.trim();
    const gid = (await run('id', ['-g', 'postgres'])).stdout.trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  let started = false;
  t.after(async () => {
    if (started) await pgUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  await pgUser(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const start = async () => {
    // Its socket in the temporary folder, TCP on loopback only; durability is not the point here.
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await pgUser(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    started = true;
  };
  const stop = async () => {
    // fast: the server ends every session and exits, as a database being shut down does.
    await pgUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    started = false;
  };
  const pids = () => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  await start();
  return { port, volumeUrl: (schema) => `postgres://postgres@127.0.0.1:${port}/postgres?schema=${schema}`, stop, start, pids };
}
