import { readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError, type ErrorCode } from '../shared/errors.js';
import { newTraceId } from '../shared/trace-id.js';

/** dist/console, next to dist/admin (Vite writes it at build time). */
const ROOT = fileURLToPath(new URL('../console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

// The console talks only to this origin; xyflow positions nodes with inline styles.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * Serves the console's static files under /console/ (no token needed: the files hold
 * no data; every call they make carries the operator's bearer token). Paths without a
 * file extension get index.html, so views can be reloaded. Returns false for other paths.
 */
export function serveConsole(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
  if (pathname !== '/console' && !pathname.startsWith('/console/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    sendError(res, 'Svc.Request.MethodNotAllowed', `${req.method} is not allowed on ${pathname}`);
    return true;
  }
  if (pathname === '/console') {
    res.writeHead(308, { location: '/console/' });
    res.end();
    return true;
  }
  let rel: string;
  try {
    rel = decodeURIComponent(pathname.slice('/console/'.length));
  } catch {
    rel = '\0';
  }
  const file = normalize(join(ROOT, rel));
  const inside = file.startsWith(ROOT) && !rel.includes('\0');
  const target = inside && extname(file) !== '' && isFile(file) ? file : join(ROOT, 'index.html');
  if (!inside || (extname(rel) !== '' && target !== file)) {
    sendError(res, 'Svc.Request.NotFound', 'No such console file');
    return true;
  }
  if (!isFile(target)) {
    sendError(res, 'Svc.Console.NotBuilt', 'The console is not built: run npm run build');
    return true;
  }
  const body = read(target);
  const immutable = isHashedAsset(ROOT, target);
  res.writeHead(200, {
    'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
    'content-length': body.length,
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    ...SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}

// The build output does not change while the process runs: each file is read once.
const cache = new Map<string, Buffer>();

function read(path: string): Buffer {
  let body = cache.get(path);
  if (body === undefined) cache.set(path, (body = readFileSync(path)));
  return body;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  const traceId = newTraceId();
  const e = new SvcError(code, message);
  const text = JSON.stringify(e.envelope(traceId));
  res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-trace-id': traceId });
  res.end(text);
}

/**
 * Vite's hashed bundles live in the console folder's own assets/: those may be cached
 * for good. Decided on the path below the console folder, so an install folder named
 * `assets` does not get index.html cached too.
 */
export function isHashedAsset(root: string, file: string): boolean {
  return relative(root, file).startsWith(`assets${sep}`);
}
