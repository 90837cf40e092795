import { setIdleTimeout, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket, type us_socket_context_t } from './uws.js';
import { OpenWebSockets } from './websocket-sockets.js';
import { TlsListener } from './tls-listener.js';
import type { CompiledServerTls } from '../contracts/generation.js';
import { Exchange } from './exchange.js';
import { replyStatic } from './fixed-reply.js';
import { framingOk } from './request-framing.js';
import { requestCallback } from './request-callback.js';
import type { StaticReply } from './response-head.js';
import type { Logger } from '../shared/logger.js';
import { normalizePath } from '../shared/normalize-path.js';
import { isValidHost } from './host-header.js';
import type { DataPlaneSettings, DataPortLimits } from '../contracts/ipc.js';
import { TrustedProxies } from './trusted-proxies.js';
import { ConnectionGuard } from './connection-guard.js';
import { methodOk, overLimit } from './request-checks.js';
import { LimitEvents } from './limit-events.js';
import type { ErrorCode } from '../shared/errors.js';
import type { RequestIds } from './observe/request-ids.js';
import type { RequestObserver } from './observe/observer.js';
import { clientAddress } from './client-address.js';

/** How long a drain waits after closing WebSockets, for the close frames to reach both peers. */
const CLOSE_FLUSH_MS = 200;

/** What a request goes to: a fixed reply, or a handler that needs the whole exchange. */
export type Target = StaticReply | ((ex: Exchange) => void);

/** Decides from the method, the normalised path, Host and whether the request came over TLS, synchronously; `rid`: the request's id ('' without ids). */
export type Router = (method: string, path: string, host: string, tls: boolean, rid: string) => Target;

/** How requests are named and observed (observe/): ids null without worker.json `requestId`. */
export interface Observation {
  ids: RequestIds | null;
  observer: RequestObserver;
}

type Handler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * The data-port server: one uWS app per worker, listening with SO_REUSEPORT (uWS's
 * default on Linux). Fixed replies are written straight from the request callback;
 * only handlers that need the exchange (proxying, steps) pay for one. Tracks in-flight
 * exchanges so a drain can wait for them. With worker.json `listen.tls`, a second app
 * (uWS's SSLApp) serves the same handler over TLS, its server names following the
 * published certificates (tls-listener.ts).
 */
export class DataServer {
  private readonly app = uws.App();
  private listenSocket: us_listen_socket | null = null;
  private tls: TlsListener | null = null;
  private inFlight = 0;
  private draining = false;
  private idleWaiters: (() => void)[] = [];
  private readonly webSockets: OpenWebSockets;
  /** The port listened on, for X-Forwarded-Port ('' until listening). */
  private port = '';
  private tlsPort = '';

  /** `refusal` makes the envelope for an answer the data server gives itself, with the request's id as its traceId. */
  constructor(
    route: Router,
    refusal: (code: ErrorCode, rid: string) => StaticReply,
    log: Logger,
    /** worker.json's path policy and trusted proxies. */
    readonly settings: DataPlaneSettings,
    { ids, observer }: Observation,
  ) {
    const paths = settings.paths;
    let lastValidHost = '';
    const proxies = new TrustedProxies(settings.trustedProxies);
    const limits = settings.limits;
    const events = new LimitEvents(log);
    const guard = new ConnectionGuard(limits, events, (code) => refusal(code, ''));
    const watching = !observer.idle;
    const recording = observer.recording;
    const clientOf = (peer: string, req: HttpRequest) => (proxies.none ? peer : clientAddress(peer, req.getHeader('x-forwarded-for') || undefined, proxies.trusts));
    this.guard = guard;
    this.limits = limits;
    guard.attach(this.app);
    setIdleTimeout(this.app, limits.idleTimeoutS);
    const closing = () => this.draining;
    const idle = () => {
      if (this.inFlight === 0 && this.webSockets.size === 0 && this.idleWaiters.length) for (const w of this.idleWaiters.splice(0)) w();
    };
    const finished = (ex: Exchange) => {
      --this.inFlight;
      if (watching) observer.exchangeEnded(ex);
      idle();
    };
    this.webSockets = new OpenWebSockets(log);
    this.webSockets.onEmpty = idle;
    // `context` is set for a WebSocket handshake (uWS routes one to the ws behavior's upgrade): its
    // route proxies it or refuses it; every other request comes with null. `tls`: it came to the TLS port.
    const serve = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t | null, tls: boolean) => {
      let ex: Exchange | undefined;
      let method = '';
      let rid = '';
      let path: string | null = null;
      requestCallback.enter();
      try {
        if (guard.candidates > 0) guard.requestFrom(res);
        method = req.getCaseSensitiveMethod();
        if (ids !== null) rid = ids.assign(req, res);
        const url = req.getUrl();
        const refused = overLimit(req, url, limits, events);
        if (refused !== null) {
          const r = refusal(refused, rid);
          // Observed first: a record reads the peer address, which uWS refuses once the answer ended.
          // A target refused for its length is not logged ('': neither path nor query); others are, as sent.
          if (watching) observer.fixedAnswered(r, req, res, method, refused === 'Svc.Data.TargetTooLong' ? '' : url, rid, clientOf);
          replyStatic(res, r, true, method === 'HEAD', rid === '' ? '' : ids!.echo(rid));
          return;
        }
        // One path per request, decided here: the route table matches it, steps read it
        // as ex.path, the upstream receives it (normalize-path.ts). null: refused.
        path = normalizePath(url, paths);
        const host = req.getHeader('host');
        // Most requests repeat the previous Host: a string compare instead of the scan.
        let hostOk = host === lastValidHost;
        if (!hostOk && isValidHost(host)) {
          hostOk = true;
          lastValidHost = host;
        }
        let target = path === null || !hostOk || !methodOk(method) ? refusal('Svc.Data.BadRequest', rid) : route(method, path, host, tls, rid);
        // A handshake to a fixed answer is refused, not answered as if it were a plain GET; error envelopes stay as they are.
        if (context !== null && typeof target !== 'function' && target.status < 400) target = refusal('Svc.Data.UpgradeRefused', rid);
        const head = method === 'HEAD';
        // A fixed answer skips the Exchange, unless the request's framing must be refused first.
        if (typeof target !== 'function' && (!target.large || head) && framingOk(req.getHeader('transfer-encoding'))) {
          if (watching) observer.fixedAnswered(target, req, res, method, path ?? url, rid, clientOf);
          replyStatic(res, target, this.draining, head, rid === '' ? '' : ids!.echo(rid));
          return;
        }
        this.inFlight++;
        ex = new Exchange(res, req, method, path ?? '/', closing, finished, proxies, tls ? this.tlsPort : this.port, limits, events, tls ? 'https' : 'http');
        ex.upgradeContext = context;
        if (rid !== '') ex.setRequestId(ids!.header, rid);
        // The socket's address is gone when the exchange ends: a sampled request's record reads it now.
        if (recording && observer.sampled()) {
          ex.logged = true;
          void ex.clientAddress;
        }
        if (ex.badFraming) ex.sendStatic(refusal('Svc.Data.BadFraming', rid));
        else if (ex.hostRepeated) ex.sendStatic(refusal('Svc.Data.BadRequest', rid));
        else if (typeof target === 'function') target(ex);
        else {
          // A large fixed body needs tryEnd and a writable callback; it is still its route's answer.
          if (target.meter !== undefined) ex.meter = target.meter;
          ex.sendStatic(target);
        }
      } catch (err) {
        // No exception may escape into uWS: answer 500 and keep serving.
        log.error({ err }, 'data-plane handler threw');
        const r = refusal('Svc.Internal', rid);
        if (ex) ex.sendHead(500, r.body, r.headers);
        else replyStatic(res, r, true, method === 'HEAD', rid === '' ? '' : ids!.echo(rid));
      } finally {
        requestCallback.leave();
      }
    };
    this.handle = (res, req) => serve(res, req, null, false);
    this.tlsHandle = (res, req) => serve(res, req, null, true);
    this.tlsUpgrade = (res, req, context) => serve(res, req, context, true);
    // Requests without a WebSocket key fall through from the ws route to app.any (uWS's own order).
    this.app.ws('/*', this.webSockets.behavior((res, req, context) => serve(res, req, context, false)));
    this.app.any('/*', this.handle);
  }

  /** The per-request callback uWS calls (bench/hot-path.mjs drives it with fakes). */
  readonly handle: Handler;
  private readonly tlsHandle: Handler;
  private readonly tlsUpgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void;
  private readonly guard: ConnectionGuard;
  private readonly limits: DataPortLimits;

  /** Connections open on the data port (and the TLS port), as the connection guard counts them. */
  get connections(): number {
    return this.guard.open;
  }

  /** Listens with TLS too, serving `tls`. */
  listenTls(host: string, port: number, tls: CompiledServerTls | undefined, log: Logger): boolean {
    this.tlsPort = String(port);
    const setup = (app: TemplatedApp) => {
      this.guard.attach(app);
      setIdleTimeout(app, this.limits.idleTimeoutS);
    };
    const routes = (app: TemplatedApp) => {
      app.ws('/*', this.webSockets.behavior(this.tlsUpgrade));
      app.any('/*', this.tlsHandle);
    };
    this.tls = new TlsListener(host, port, routes, setup, log);
    return this.tls.update(tls);
  }

  /** A new generation's certificates, for new TLS handshakes. */
  updateCertificates(tls: CompiledServerTls | undefined): void {
    this.tls?.update(tls);
  }

  listen(host: string, port: number): Promise<boolean> {
    this.port = String(port);
    return new Promise((resolve) => {
      this.app.listen(host, port, (socket) => {
        this.listenSocket = socket || null;
        resolve(Boolean(socket));
      });
    });
  }

  /**
   * Stops accepting, then resolves when in-flight exchanges finish and open WebSockets
   * close, or when the grace period ends: WebSockets still open then are closed with 1001
   * on both sides, and their close frames get a moment to leave before the worker exits.
   */
  drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    this.tls?.stop();
    if (this.inFlight === 0 && this.webSockets.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        if (this.webSockets.size === 0) return resolve();
        this.webSockets.closeAll(1001, 'gateway shutting down');
        setTimeout(resolve, CLOSE_FLUSH_MS);
      }, graceMs);
      this.idleWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}


