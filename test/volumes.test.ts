import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT, startGateway, tempDir, type Gateway } from './helpers/gateway.js';
import { request } from './helpers/http.js';
import { BOUNDED } from './helpers/wait.js';

const TABLES = ['entity_draft', 'entity_published', 'generation', 'admin_key', 'admin_key_usage'];

function tablesOf(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

/** Paths of the regular files a process holds open (Linux /proc), or null where /proc is not available. */
function openFiles(pid: number): string[] | null {
  if (process.platform !== 'linux') return null;
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('/') && statSync(target).isFile()) out.push(target);
    } catch {
      // closed meanwhile, or not a path
    }
  }
  return out;
}

async function volumeKind(gw: Gateway): Promise<string> {
  const r = await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: gw.tokens.root });
  assert.equal(r.status, 200, r.text);
  return r.json.volume;
}

const sqliteFiles = (dir: string) => readdirSync(dir).filter((f) => /\.(db|sqlite3?)(-wal|-shm|-journal)?$/.test(f));

test('virtual:// creates its SQLite file relative to the config folder, with every table, and reopens it after a restart', BOUNDED, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state', 'switchyard.db');
  const opts = { dir, volume: 'virtual://state/switchyard.db', keys: [{ id: 'root', scopes: ['*'] }] };
  assert.equal(existsSync(file), false);

  const first = await startGateway(t, opts);
  assert.ok(existsSync(file), 'the database file exists once the gateway is ready');
  assert.equal(await volumeKind(first), 'virtual');
  const held = openFiles(first.pid);
  if (held) assert.ok(held.includes(file), `the supervisor holds ${file} open: ${held.join(', ')}`);
  assert.equal((await first.stop()).code, 0, first.stderr());

  const tables = tablesOf(file);
  for (const name of TABLES) assert.ok(tables.includes(name), `table ${name} in ${tables.join(', ')}`);
  {
    const db = new Database(file, { readonly: true });
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal', 'the volume is in WAL mode');
    db.close();
  }

  // Leave a mark the gateway knows nothing about: if the restart reopens the same
  // file, the mark survives; if it recreated the database, it would be gone.
  {
    const db = new Database(file);
    db.exec("CREATE TABLE test_marker (v TEXT); INSERT INTO test_marker VALUES ('kept')");
    db.close();
  }
  const { ino } = statSync(file);

  const second = await startGateway(t, { ...opts, dataPort: first.dataPort, adminPort: first.adminPort });
  assert.equal(await volumeKind(second), 'virtual');
  assert.equal((await second.stop()).code, 0, second.stderr());

  assert.equal(statSync(file).ino, ino, 'the same file was reopened, not replaced');
  const db = new Database(file, { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT v FROM test_marker').all(), [{ v: 'kept' }]);
  } finally {
    db.close();
  }
  for (const name of TABLES) assert.ok(tablesOf(file).includes(name));
});

test('memory: writes no file, neither beside the config nor in the working folder', BOUNDED, async (t) => {
  const dir = tempDir(t);
  const rootBefore = sqliteFiles(ROOT);
  const gw = await startGateway(t, { dir, volume: 'memory:', keys: [{ id: 'root', scopes: ['*'] }] });
  assert.equal(await volumeKind(gw), 'memory');
  const held = openFiles(gw.pid);
  if (held) {
    const suspicious = held.filter((f) => f.startsWith(dir) || /\.(db|sqlite3?)(-wal|-shm|-journal)?$/.test(f));
    assert.deepEqual(suspicious, [], 'the supervisor holds no database file open');
  }
  assert.equal((await gw.stop()).code, 0, gw.stderr());
  assert.deepEqual(readdirSync(dir), ['worker.json'], 'the config folder holds only worker.json');
  assert.deepEqual(sqliteFiles(ROOT), rootBefore, 'no database file appeared in the working folder');
});
