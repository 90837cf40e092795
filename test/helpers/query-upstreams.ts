import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { TestContext } from 'node:test';
import Fastify from 'fastify';
import { nginxListening, startNginx } from './nginx.js';

/** What an upstream read as the credential: every value of its query parameter, and its header. */
export interface Reading {
  query: string[];
  header: string | null;
  /** The target it received, for diagnostics. */
  uri: string;
}

/**
 * An upstream that reads the query parameter `api_key` (and the X-Api-Key header) with
 * its own parser and answers what it read; `reading` turns its answer into a Reading.
 */
export interface QueryUpstream {
  name: string;
  target: string;
  reading(body: string): Reading;
}

const asJson = (body: string) => JSON.parse(body) as Reading;

/** node:http with URLSearchParams (WHATWG), as most Node frameworks read a query. */
export function urlSearchParamsUpstream(t: TestContext): Promise<QueryUpstream> {
  return listenNode(t, 'urlsearchparams', (req) => new URL(req.url ?? '/', 'http://x').searchParams.getAll('api_key'));
}

/**
 * node:http splitting on `;` as well as `&`, then decoding (`+` as a space; a pair with an
 * invalid escape skipped): how Go's url.ParseQuery read a query before 1.17, and Rack and
 * Python's old cgi module still do.
 */
export function semicolonUpstream(t: TestContext): Promise<QueryUpstream> {
  return listenNode(t, 'semicolon', (req) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    if (q === -1) return [];
    const values: string[] = [];
    for (const pair of url.slice(q + 1).split(/[&;]/)) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      try {
        const name = decodeURIComponent((eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
        if (name === 'api_key') values.push(eq === -1 ? '' : decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' ')));
      } catch {
        // Go skipped a pair it could not unescape
      }
    }
    return values;
  });
}

async function listenNode(t: TestContext, name: string, read: (req: IncomingMessage) => string[]): Promise<QueryUpstream> {
  const srv: Server = createServer((req, res) => {
    const header = req.headers['x-api-key'];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ query: read(req), header: typeof header === 'string' ? header : null, uri: req.url }));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    srv.closeAllConnections();
    return new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { name, target: `127.0.0.1:${(srv.address() as { port: number }).port}`, reading: asJson };
}

/** fastify with its default query parser (fast-querystring: names decoded, a repeated name an array). */
export async function fastifyQueryUpstream(t: TestContext): Promise<QueryUpstream> {
  const app = Fastify({ logger: false });
  app.all('/*', (req, reply) => {
    const v = (req.query as Record<string, string | string[] | undefined>).api_key;
    const header = req.headers['x-api-key'];
    return reply.send({ query: v === undefined ? [] : Array.isArray(v) ? v : [v], header: typeof header === 'string' ? header : null, uri: req.raw.url });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => {
    app.server.closeAllConnections();
    return app.close();
  });
  return { name: 'fastify', target: `127.0.0.1:${(app.server.address() as { port: number }).port}`, reading: asJson };
}

/**
 * nginx answering its `$arg_api_key` (the first pair whose RAW name is `api_key` in any
 * case; the value raw, as sent) and `$http_x_api_key`, one per line. null when nginx is
 * not installed.
 */
export async function nginxQueryUpstream(t: TestContext): Promise<QueryUpstream | null> {
  const nginx = await startNginx(t, 'default_type text/plain;', 'location / { return 200 "$arg_api_key\\n$http_x_api_key\\n$request_uri"; }');
  if (!nginx) return null;
  await nginxListening(nginx);
  const reading = (body: string): Reading => {
    const [arg = '', header = '', uri = ''] = body.split('\n');
    // nginx hands the value over raw: an application on it decodes it, so the reading is the decoded value.
    let value = arg;
    try {
      value = decodeURIComponent(arg.replace(/\+/g, ' '));
    } catch {
      // an invalid escape stays as nginx gave it
    }
    return { query: value === '' ? [] : [value], header: header === '' ? null : header, uri };
  };
  return { name: 'nginx', target: `127.0.0.1:${nginx.port}`, reading };
}
