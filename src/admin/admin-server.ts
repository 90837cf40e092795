import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';
import { SvcError, asSvcError, errorEnvelope, type ErrorCode } from '../shared/errors.js';
import { newTraceId } from '../shared/trace-id.js';
import { capConnectionsPerAddress, refuseAndClose } from './connection-guard.js';
import { isTenantName } from '../shared/tenant-name.js';
import type { Operation } from './contract.js';
import { OpRouter } from './op-router.js';
import { authenticate, checkAccess, type TokenResolver } from './authorize.js';
import { readJsonBody } from './body.js';
import { serveConsole } from './console-static.js';
import { Reply, type AuditNote, type OpHandler } from './op-context.js';
import type { Identity } from './identity.js';
import type { AuthThrottle } from './auth-throttle.js';
import { auditRecord, isAuditedWrite, type AuditRecord } from './audit-trail.js';
import { Redactor } from './redact.js';


export interface AdminServerOptions<S> {
  operations: readonly Operation[];
  handlers: Record<string, OpHandler<S>>;
  resolvers: readonly TokenResolver[];
  services: S;
  log: Logger;
  /** Failed authentications per client address; absent: no throttling. */
  throttle?: AuthThrottle;
  /** Receives every authenticated write (config, publish, key, plugin), refused or not. */
  audit?: AuditSink;
  /**
   * Runs a write handler and its audit record in one store transaction, so an answered
   * write always has its record. Absent: no transaction.
   */
  transaction?: <T>(fn: () => T) => T;
  /** Whether a string is a system key's token: such a path segment is redacted and never names a tenant or entity. */
  isSystemToken?: (s: string) => boolean;
  /** Open connections one client address may hold (admin.maxConnectionsPerAddress); absent: no cap. */
  maxConnectionsPerAddress?: number;
}

/** Where audit records go: appended before the answer, corrected if the answer changed after. */
export interface AuditSink {
  append(record: AuditRecord): number;
  /** A record appended in a handler's own transaction, whose answer then came out different. */
  setStatus(id: number, status: number): void;
}

/**
 * The admin port: node:http, routed by the contract table. Every call gets a
 * server-side traceId (in the error body, the X-Trace-Id header and its log line);
 * every error leaves as a JSON envelope. Client-supplied addresses and ids are never
 * trusted: the log names the socket peer.
 */
export function createAdminServer<S>(opts: AdminServerOptions<S>): Server {
  const missing = opts.operations.filter((op) => !opts.handlers[op.id]).map((op) => op.id);
  if (missing.length) throw new Error(`operations without a handler: ${missing.join(', ')}`);
  const router = new OpRouter(opts.operations);
  const redact = new Redactor(opts.isSystemToken);

  // Slow clients: 10 s for the request head, 30 s for the whole request, checked every
  // second (Node's default check interval is 30 s, which would stretch both limits).
  const server = createServer({ connectionsCheckingInterval: 1_000, headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    if (refused?.has(req.socket)) return void req.socket.destroy(); // answered 429 already
    // handle() answers every failure itself; a rejection escaping it would end the process.
    handle(req, res).catch((err) => {
      const traceId = newTraceId();
      opts.log.error({ err, traceId }, 'admin request failed outside its handler');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', 'x-trace-id': traceId }).end(JSON.stringify(errorEnvelope('Svc.Internal', traceId)));
      else res.destroy();
    });
  });
  const refused = opts.maxConnectionsPerAddress === undefined ? null : capConnectionsPerAddress(server, opts.maxConnectionsPerAddress);

  // What node:http refuses before a request exists (a bad request line or chunk, a head
  // over its limit, a head or body too slow) is answered with an envelope too, not
  // Node's bare status line: every error body is a JSON envelope, as the admin contract says.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const code: ErrorCode | null =
      err.code === 'HPE_HEADER_OVERFLOW' ? 'Svc.Request.HeadTooLarge' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'Svc.Request.Timeout' : err.code?.startsWith('HPE_') ? 'Svc.Request.Malformed' : null;
    if (code === null || !socket.writable) return void socket.destroy();
    // Bytes pipelined behind a complete request still being handled: an envelope now would
    // stand in for that request's own answer. Its answer goes out, then the connection
    // closes. (A request whose own body failed, or an idle keep-alive connection after a
    // complete answer, gets the envelope.)
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight && (inFlight.headersSent || inFlight.req.complete)) {
      inFlight.once('close', () => socket.destroy());
      return;
    }
    refuseAndClose(socket, code);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A target the URL parser refuses (`//[`) is answered 404 below, never thrown.
    const url = URL.canParse(req.url ?? '/', 'http://admin.invalid') ? new URL(req.url ?? '/', 'http://admin.invalid') : null;
    const pathname = url?.pathname ?? '';
    if (url !== null && serveConsole(req, res, pathname)) return;
    const traceId = newTraceId();
    const started = process.hrtime.bigint();
    // The socket peer: the only address the admin port believes (never X-Forwarded-*).
    const peer = req.socket.remoteAddress ?? '';
    let identity: Identity | null = null;
    let status = 500;
    let allow: string[] | undefined;
    let retryAfter: number | undefined;
    let audited: { op: Operation; params: Record<string, string> } | null = null;
    const note: AuditNote = {};
    // This call's audit record once appended: appended once, its status corrected if the answer changed.
    let recorded: { id: number; status: number } | null = null;
    const record = (st: number): void => {
      if (!audited || !identity || !opts.audit) return;
      if (recorded === null) recorded = { id: opts.audit.append(auditRecord(audited.op, redact.params(audited.params), identity, note, st, traceId)), status: st };
      else if (recorded.status !== st) {
        opts.audit.setStatus(recorded.id, st);
        recorded.status = st;
      }
    };
    note.commit = () => record(200);
    try {
      if (url === null) throw new SvcError('Svc.Request.NotFound', 'The request target is not a valid path');
      const route = router.match(req.method ?? 'GET', pathname);
      if (route.kind === 'none') throw new SvcError('Svc.Request.NotFound', `No operation at ${pathname}`);
      if (route.kind === 'method') {
        allow = route.allow;
        throw new SvcError('Svc.Request.MethodNotAllowed', `${req.method} is not allowed on ${pathname}`);
      }
      const { op, params } = route;
      if (op.auth !== 'none' && opts.throttle) {
        const wait = opts.throttle.waitMs(peer);
        if (wait > 0) {
          retryAfter = Math.max(1, Math.ceil(wait / 1000));
          throw new SvcError('Svc.Auth.Throttled', undefined, { retryAfter });
        }
      }
      try {
        identity = authenticate(op, req.headers.authorization, opts.resolvers);
      } catch (err) {
        // Only a presented token is a guess; a missing header costs nothing.
        if (req.headers.authorization !== undefined) opts.throttle?.failed(peer);
        if (opts.throttle) opts.throttle.unauthenticated++;
        throw err;
      }
      if (identity && isAuditedWrite(op)) audited = { op, params };
      checkAccess(op, params, identity);
      // A tenant and an entity name are stored: a token pasted there would reach the volume.
      for (const p of ['tenant', 'name'] as const) {
        const v = params[p];
        if (v !== undefined && redact.isBearerToken(v)) throw new SvcError('Svc.Request.BadParam', `A bearer token cannot be a ${p}`);
      }
      if (params.tenant !== undefined && !isTenantName(params.tenant)) {
        throw new SvcError('Svc.Request.BadParam', `Invalid tenant name ${JSON.stringify(params.tenant)}`);
      }
      const body = op.method === 'POST' ? await readJsonBody(req) : undefined;
      const handler = opts.handlers[op.id]!;
      const ctx = { op, params, query: url.searchParams, body, identity, traceId, services: opts.services, audit: note };
      // A synchronous write commits with its record; an asynchronous one (a publish) calls
      // note.commit inside its own transaction. Either way the record exists before the answer.
      // (A transaction cannot return a promise: a pending answer leaves it wrapped.)
      const run = (): { reply: Reply } | { pending: Promise<unknown> } => {
        const out = handler(ctx);
        if (out instanceof Promise) return { pending: out };
        const reply = asReply(out);
        record(reply.status);
        return { reply };
      };
      const ran = audited && opts.transaction ? opts.transaction(run) : run();
      const reply = 'reply' in ran ? ran.reply : asReply(await ran.pending);
      status = reply.status;
      record(status);
      if (reply.contentType !== undefined) writeText(res, status, String(reply.body), reply.contentType, traceId);
      else writeJson(res, status, reply.body, traceId);
    } catch (err) {
      const e = asSvcError(err);
      if (e.code === 'Svc.Internal') opts.log.error({ err, traceId }, 'admin handler failed');
      status = e.status;
      if (allow) res.setHeader('allow', allow.join(', '));
      retryAfter ??= typeof e.extra?.retryAfter === 'number' ? e.extra.retryAfter : undefined;
      if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
      // A 401 names the scheme it wants (RFC 9110 §15.5.2, RFC 6750 §3).
      if (status === 401) res.setHeader('www-authenticate', req.headers.authorization === undefined ? 'Bearer realm="switchyard"' : 'Bearer realm="switchyard", error="invalid_token"');
      try {
        record(status);
      } catch (auditErr) {
        opts.log.error({ err: auditErr, traceId }, 'audit write failed');
      }
      writeJson(res, status, e.envelope(traceId), traceId);
    } finally {
      opts.log.info(
        {
          method: req.method,
          path: redact.path(url === null ? (req.url ?? '') : pathname),
          status,
          traceId,
          identity: identity?.id ?? null,
          peer,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'admin call',
      );
    }
  }

  return server;
}

const asReply = (result: unknown): Reply => (result instanceof Reply ? result : new Reply(200, result));

function writeJson(res: ServerResponse, status: number, body: unknown, traceId: string): void {
  writeText(res, status, JSON.stringify(body), 'application/json', traceId);
}

function writeText(res: ServerResponse, status: number, text: string, contentType: string, traceId: string): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    'x-trace-id': traceId,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}
