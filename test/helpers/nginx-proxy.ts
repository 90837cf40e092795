import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { tempDir } from './gateway.js';
import { freePort } from './ports.js';
import { NGINX } from './path-upstreams.js';
import { sendRaw } from './conformance-runner.js';

/**
 * nginx as a plain reverse proxy in front of `upstreamPort` (HTTP/1.1 to the upstream,
 * keep-alive, its default limits otherwise), run in the foreground as a child of the test
 * with its config, pid and error log in a temp dir, and killed by its PID after the test.
 * Resolves with its port, or null when nginx is not installed.
 */
export async function startNginxProxy(t: TestContext, upstreamPort: number): Promise<number | null> {
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
  client_header_timeout 2s;
  client_body_timeout 2s;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 4; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
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
  // Ready when it answers on its port (a request the upstream also sees, before any case runs).
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr} ${log(dir)}`);
    const r = await sendRaw(port, ['GET /ready HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n'], { want: 1, settleMs: 0, timeoutMs: 1_000 });
    if (r.statuses.length) return port;
    if (Date.now() > deadline) throw new Error(`nginx did not answer within 10 s: ${stderr} ${log(dir)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

function log(dir: string): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8');
  } catch {
    return '';
  }
}
