import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { errorEnvelope } from '../shared/errors.js';
import { newTraceId } from '../shared/trace-id.js';
import { OpRouter } from './op-router.js';
import { Redactor } from './redact.js';
import { capConnectionsPerAddress } from './connection-guard.js';
import { answerClientErrors } from './client-error.js';
import { attachConnectionBudget } from './connection-budget.js';
import { serveConsole } from './console-static.js';
import { AdminCall } from './admin-call.js';
import { CallsInProgress } from './calls-in-progress.js';
import type { AdminCallDeps, AdminServerOptions } from './admin-options.js';

const HEAD_TIMEOUT_MS = 10_000;
/** Admin calls one identity may have in progress: the console fires a handful at once, CI scripts a few. */
const CALLS_PER_IDENTITY = 32;

/**
 * The admin port: node:http, routed by the contract table. Every call gets a
 * server-side traceId (in the error body, the X-Trace-Id header and its log line);
 * every error leaves as a JSON envelope. Client-supplied addresses and ids are never
 * trusted: the log names the socket peer.
 */
export function createAdminServer<S>(opts: AdminServerOptions<S>): Server {
  const missing = opts.operations.filter((op) => !opts.handlers[op.id]).map((op) => op.id);
  if (missing.length) throw new Error(`operations without a handler: ${missing.join(', ')}`);
  const deps: AdminCallDeps<S> = { ...opts, router: new OpRouter(opts.operations), redact: new Redactor(opts.isSystemToken), calls: new CallsInProgress(CALLS_PER_IDENTITY) };

  // Slow clients: 10 s for the request head, 30 s for the whole request, checked every
  // second (Node's default check interval is 30 s, which would stretch both limits). The
  // head deadline shortens as the connection cap nears (ConnectionBudget).
  const server = createServer({ connectionsCheckingInterval: 1_000, headersTimeout: HEAD_TIMEOUT_MS, requestTimeout: 30_000 }, (req, res) => {
    if (refused?.has(req.socket)) return void req.socket.destroy(); // answered 429 already
    // handle() answers every failure itself; a rejection escaping it would end the process.
    handle(req, res, deps).catch((err) => {
      const traceId = newTraceId();
      opts.log.error({ err, traceId }, 'admin request failed outside its handler');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', 'x-trace-id': traceId }).end(JSON.stringify(errorEnvelope('Svc.Internal', traceId)));
      else res.destroy();
    });
  });
  const refused = opts.maxConnectionsPerAddress === undefined ? null : capConnectionsPerAddress(server, opts.maxConnectionsPerAddress);
  // After the per-address cap: a connection it refused is not worth evicting another for.
  if (opts.maxConnections !== undefined) {
    const budget = attachConnectionBudget(server, opts.maxConnections, HEAD_TIMEOUT_MS, opts.log);
    deps.authenticated = (socket) => budget.authenticated(socket);
    server.on('close', () => budget.close());
  }
  answerClientErrors(server);
  return server;
}

/** Console files are served as they are, before a call (and its traceId) exists; the rest is an admin call. */
async function handle<S>(req: IncomingMessage, res: ServerResponse, deps: AdminCallDeps<S>): Promise<void> {
  const url = URL.canParse(req.url ?? '/', 'http://admin.invalid') ? new URL(req.url ?? '/', 'http://admin.invalid') : null;
  if (url !== null && serveConsole(req, res, url.pathname)) return;
  await new AdminCall(req, res, url, deps).run();
}
