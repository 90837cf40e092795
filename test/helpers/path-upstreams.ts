import { createServer, type Server } from 'node:http';
import type { TestContext } from 'node:test';
import Fastify from 'fastify';
import { nginxListening, startNginx } from './nginx.js';

/**
 * Upstreams with an admin handler under /admin-api and a public one for the rest, each
 * deciding with its own router, each answering `<handler> <the target it received>` as
 * text: what a gateway forwarded, and whom it reached.
 */
export interface PathUpstream {
  name: string;
  target: string;
}

export { NGINX } from './nginx.js';

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
  const nginx = await startNginx(
    t,
    'default_type text/plain;',
    'location ^~ /admin-api { return 200 "admin $request_uri"; }\n    location / { return 200 "public $request_uri"; }',
  );
  if (!nginx) return null;
  await nginxListening(nginx);
  return { name: 'nginx', target: `127.0.0.1:${nginx.port}` };
}
