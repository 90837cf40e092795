import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { tempDir } from './gateway.js';
import { freePort } from './ports.js';
import type { QueryUpstream, Reading } from './query-upstreams.js';

/** Debian's php-cli, installed by scripts/install-test-packages.sh. */
export const PHP = '/usr/bin/php';

/**
 * Answers what PHP's `$_GET` holds under `api_key` (every string in it, an array flattened:
 * `api_key[]=K` is an array), `X-Api-Key`, and the target, as JSON: PHP registers names its
 * own way (php_register_variable_ex: cut at NUL, `.`, space and an unclosed `[` as `_`).
 */
const ROUTER = `<?php
$v = $_GET['api_key'] ?? null;
$q = [];
if (is_array($v)) array_walk_recursive($v, function ($x) use (&$q) { $q[] = (string) $x; });
elseif ($v !== null) $q[] = $v;
header('Content-Type: application/json');
echo json_encode(['query' => $q, 'header' => $_SERVER['HTTP_X_API_KEY'] ?? null, 'uri' => $_SERVER['REQUEST_URI']]);
`;

/**
 * PHP's built-in server (`php -S`) with the router above, on a port chosen now, killed by
 * its PID after the test; null when php is not installed.
 */
export async function phpQueryUpstream(t: TestContext): Promise<QueryUpstream | null> {
  if (!existsSync(PHP)) return null;
  const dir = tempDir(t, 'switchyard-php-');
  const router = join(dir, 'router.php');
  writeFileSync(router, ROUTER);
  const port = await freePort();
  const child = spawn(PHP, ['-n', '-S', `127.0.0.1:${port}`, router], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  t.after(() => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`php exited ${child.exitCode}: ${stderr}`);
    try {
      await (await fetch(`http://127.0.0.1:${port}/`)).text();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`php did not listen within 10 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { name: 'php', target: `127.0.0.1:${port}`, reading: (body) => JSON.parse(body) as Reading };
}
