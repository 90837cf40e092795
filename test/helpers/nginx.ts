import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { tempDir } from './gateway.js';
import { freePort } from './ports.js';

/** Debian's nginx-light, installed by scripts/install-test-packages.sh. */
export const NGINX = '/usr/sbin/nginx';

export interface Nginx {
  port: number;
  /** Why it is not ready: its exit, stderr and error log. */
  failure(): string | null;
  describe(): string;
}

/**
 * nginx in the foreground as a child of the test, with its config, pid, temp folders and
 * error log in a temp dir, listening on a port chosen now, killed by its PID after the test.
 * `http` is the inside of the http block beside the server; `locations` the server's inside.
 * null when nginx is not installed.
 */
export async function startNginx(t: TestContext, http: string, locations: string): Promise<Nginx | null> {
  if (!existsSync(NGINX)) return null;
  const dir = tempDir(t, 'switchyard-nginx-');
  const port = await freePort();
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${http}
  server {
    listen 127.0.0.1:${port};
    ${locations}
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  t.after(() => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  });
  const describe = () => `${stderr} ${readLog(dir)}`;
  return { port, describe, failure: () => (child.exitCode === null ? null : `nginx exited ${child.exitCode}: ${describe()}`) };
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8');
  } catch {
    return '';
  }
}

/** Resolves once `nginx` accepts a request on its port (10 s at most); throws with its log if it exits or never does. */
export async function nginxListening(nginx: Nginx): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failed = nginx.failure();
    if (failed) throw new Error(failed);
    try {
      const r = await fetch(`http://127.0.0.1:${nginx.port}/`);
      await r.text();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen within 10 s: ${nginx.describe()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
