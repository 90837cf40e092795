import { createServer, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Fastify from 'fastify';
import { freePort } from './ports.js';
import { tempDir } from './gateway.js';

/**
 * Upstreams with an admin handler under /admin-api and a public one for the rest, each
 * deciding with its own router, each answering `<handler> <the target it received>` as
 * text: what a gateway forwarded, and whom it reached.
 */
export interface PathUpstream {
  name: string;
  target: string;
}

export const NGINX = '/usr/sbin/nginx';

/** node:http deciding with `req.url.startsWith('/admin-api')`. */
export function nodeUpstream(t: TestContext): Promise<PathUpstream> {
  return listenNode(t, 'node', (url) => url.startsWith('/admin-api'));
}

/** node:http lower-casing the path before its prefix check, as Express's default router ignores case. */
export function caseInsensitiveUpstream(t: TestContext): Promise<PathUpstream> {
  return listenNode(t, 'case-insensitive', (url) => url.toLowerCase().startsWith('/admin-api'));
}

async function listenNode(t: TestContext, name: string, isAdmin: (url: string) => boolean): Promise<PathUpstream> {
  const srv: Server = createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`${isAdmin(req.url ?? '') ? 'admin' : 'public'} ${req.url}`);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    srv.closeAllConnections();
    return new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { name, target: `127.0.0.1:${(srv.address() as { port: number }).port}` };
}

/** fastify: its own router (find-my-way, which percent-decodes) picks `/admin-api*` or the rest. */
export async function fastifyUpstream(t: TestContext): Promise<PathUpstream> {
  const app = Fastify({ logger: false });
  const answer = (handler: string) => (req: { raw: { url?: string } }, reply: { type(t: string): { send(b: string): void } }) => reply.type('text/plain').send(`${handler} ${req.raw.url}`);
  app.all('/admin-api', answer('admin'));
  app.all('/admin-api/*', answer('admin'));
  app.all('/*', answer('public'));
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => {
    app.server.closeAllConnections();
    return app.close();
  });
  const addr = app.server.address() as { port: number };
  return { name: 'fastify', target: `127.0.0.1:${addr.port}` };
}

/**
 * nginx with `location ^~ /admin-api` (nginx matches locations on the decoded path,
 * slashes merged, dot segments resolved), run in the foreground as a child of the test
 * with a config in a temp dir and killed by its PID. null when nginx is not installed.
 */
export async function nginxUpstream(t: TestContext): Promise<PathUpstream | null> {
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
  default_type text/plain;
  server {
    listen 127.0.0.1:${port};
    location ^~ /admin-api { return 200 "admin $request_uri"; }
    location / { return 200 "public $request_uri"; }
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
  // Ready when it accepts a connection on its port.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr} ${readLog(dir)}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      await r.text();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen within 10 s: ${stderr} ${readLog(dir)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { name: 'nginx', target: `127.0.0.1:${port}` };
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8');
  } catch {
    return '';
  }
}
