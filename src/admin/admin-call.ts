import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError, asSvcError } from '../shared/errors.js';
import { newTraceId } from '../shared/trace-id.js';
import type { Operation } from './contract.js';
import type { Params } from './op-router.js';
import { checkAccess } from './authorize.js';
import { authenticateCounted, checkNameParams, refuseThrottled } from './call-gates.js';
import { readJsonBody } from './body.js';
import { hasOwnTransaction, type AuditNote, type OpContext, type Reply } from './op-context.js';
import type { Identity } from './identity.js';
import { CallAuditRecord, auditRecord, isAuditedWrite } from './audit-trail.js';
import { asReply, setErrorHeaders, writeJson, writeText } from './admin-reply.js';
import type { AdminCallDeps } from './admin-options.js';
import type { SessionCredential } from './authorize.js';
import { CONSOLE_HEADER, SESSION_COOKIE, clearedSessionCookie, requestCookie } from './oidc/console-cookies.js';


/**
 * One admin call, from its target to its log line. `run` names the phases in the order
 * they check; this object alone owns the call's status, identity and audit record.
 */
export class AdminCall<S> {
  private readonly traceId = newTraceId();
  private readonly started = process.hrtime.bigint();
  /** The socket peer: the only address the admin port believes (never X-Forwarded-*). */
  private readonly peer: string;
  private readonly pathname: string;
  private identity: Identity | null = null;
  private status = 500;
  private allow: string[] | undefined;
  private auditedWrite = false;
  /** The console presented a session cookie: refused (ended, expired), the browser is told to drop it. */
  private presentedSession = false;
  private record: CallAuditRecord | null = null;
  /** Ends this call's place among its identity's calls in progress. */
  private leave: (() => void) | null = null;
  private readonly note: AuditNote = { commit: async () => this.record?.settle(200) };

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    /** Null: a target the URL parser refuses (`//[`), answered 404, never thrown. */
    private readonly url: URL | null,
    private readonly deps: AdminCallDeps<S>,
  ) {
    this.peer = req.socket.remoteAddress ?? '';
    this.pathname = url?.pathname ?? '';
  }

  async run(): Promise<void> {
    try {
      const { op, params, query } = this.route();
      refuseThrottled(op, this.peer, this.deps.throttle);
      this.identity = await authenticateCounted(op, this.req.headers.authorization, this.peer, this.deps.resolvers, this.deps.throttle, this.session());
      if (this.identity !== null) this.enter(this.identity);
      this.noteAuditedWrite(op, params);
      checkAccess(op, params, this.identity);
      checkNameParams(params, this.deps.redact);
      const body = op.method === 'POST' ? await readJsonBody(this.req) : undefined;
      const reply = await this.runHandler({ op, params, query, body, identity: this.identity, traceId: this.traceId, headers: this.req.headers, peer: this.peer, services: this.deps.services, audit: this.note });
      await this.answer(reply);
    } catch (err) {
      await this.answerError(err);
    } finally {
      this.leave?.();
      this.logLine();
    }
  }

  /** The console session cookie the call presented, when console sessions are on (read only for calls that authenticate). */
  private session(): SessionCredential | undefined {
    const sessions = this.deps.sessions;
    const id = sessions === undefined ? undefined : requestCookie(this.req.headers.cookie, SESSION_COOKIE);
    if (sessions === undefined || id === undefined || id === '') return undefined;
    const consoleHeader = this.req.headers[CONSOLE_HEADER] === '1';
    this.presentedSession = consoleHeader;
    return { id, consoleHeader, resolver: sessions.resolver };
  }

  /** An authenticated call counts against its identity's calls in progress (its body is read after this). */
  private enter(identity: Identity): void {
    this.leave = this.deps.calls.enter(identity.id);
    if (this.leave === null) throw new SvcError('Svc.Request.TooManyCalls', undefined, { retryAfter: 1 });
    this.deps.authenticated?.(this.req.socket);
  }

  /** 404 for no operation at the path, 405 (with Allow) for one that does not take the method. */
  private route(): { op: Operation; params: Params; query: URLSearchParams } {
    if (this.url === null) throw new SvcError('Svc.Request.NotFound', 'The request target is not a valid path');
    const route = this.deps.router.match(this.req.method ?? 'GET', this.pathname);
    if (route.kind === 'none') throw new SvcError('Svc.Request.NotFound', `No operation at ${this.pathname}`);
    if (route.kind === 'method') {
      this.allow = route.allow;
      throw new SvcError('Svc.Request.MethodNotAllowed', `${this.req.method} is not allowed on ${this.pathname}`);
    }
    return { op: route.op, params: route.params, query: this.url.searchParams };
  }

  /** From here on an authenticated write leaves an audit record, whatever its answer. */
  private noteAuditedWrite(op: Operation, params: Params): void {
    const identity = this.identity;
    if (!identity || !isAuditedWrite(op)) return;
    this.auditedWrite = true;
    const sink = this.deps.audit;
    if (sink) this.record = new CallAuditRecord(sink, (st) => auditRecord(op, this.deps.redact.params(params), identity, this.note, st, this.traceId));
  }

  /**
   * A write commits with its record, in one transaction; one that commits in its own (a
   * publish, ownTransaction) calls note.commit inside the one that commits its change.
   * Either way the record exists before the answer.
   */
  private async runHandler(ctx: OpContext<S>): Promise<Reply> {
    const handler = this.deps.handlers[ctx.op.id]!;
    const run = async (): Promise<Reply> => {
      const reply = asReply(await handler(ctx));
      await this.record?.settle(reply.status);
      return reply;
    };
    const transaction = this.deps.transaction;
    if (!this.auditedWrite || !transaction || hasOwnTransaction(handler)) return run();
    // A tenant's writes queue on this node before taking a connection (StoreDb.transaction).
    const tenant = ctx.op.level === 'tenant' ? ctx.params.tenant : undefined;
    return transaction(run, tenant === undefined ? undefined : { tenant });
  }

  private async answer(reply: Reply): Promise<void> {
    this.status = reply.status;
    await this.record?.settle(this.status);
    for (const [name, value] of Object.entries(reply.headers ?? {})) this.res.setHeader(name, value);
    if (reply.contentType !== undefined) writeText(this.res, this.status, String(reply.body), reply.contentType, this.traceId);
    else writeJson(this.res, this.status, reply.body, this.traceId);
  }

  /** Any failure leaves as its envelope; the audit record still gets the status first. */
  private async answerError(err: unknown): Promise<void> {
    const e = asSvcError(err);
    if (e.code === 'Svc.Internal') this.deps.log.error({ err, traceId: this.traceId }, 'admin handler failed');
    this.status = e.status;
    setErrorHeaders(this.res, e, this.allow, this.req.headers.authorization);
    if (e.status === 401 && this.presentedSession && this.identity === null) this.res.setHeader('set-cookie', clearedSessionCookie(this.deps.sessions!.secure));
    try {
      await this.record?.settle(this.status);
    } catch (auditErr) {
      this.deps.log.error({ err: auditErr, traceId: this.traceId }, 'audit write failed');
    }
    writeJson(this.res, this.status, e.envelope(this.traceId), this.traceId);
  }

  /** One line per call; the path is redacted, the peer is the socket's. */
  private logLine(): void {
    this.deps.log.info(
      {
        method: this.req.method,
        path: this.deps.redact.path(this.url === null ? (this.req.url ?? '') : this.pathname),
        status: this.status,
        traceId: this.traceId,
        identity: this.identity?.id ?? null,
        peer: this.peer,
        ms: Number(process.hrtime.bigint() - this.started) / 1e6,
      },
      'admin call',
    );
  }
}
