import { setIdleTimeout, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { TlsListener } from './tls-listener.js';
import type { CompiledServerTls } from '../contracts/generation.js';
import type { SecretBox } from '../shared/secret-box.js';
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

/** What a request goes to: a fixed reply, or a handler that needs the whole exchange. */
export type Target = StaticReply | ((ex: Exchange) => void);

/** Decides from the method, the normalised path, Host and whether the request came over TLS, synchronously. */
export type Router = (method: string, path: string, host: string, tls: boolean) => Target;

type Handler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * The data-port server: one uWS app per worker, listening with SO_REUSEPORT (uWS's
 * default on Linux). Fixed replies are written straight from the request callback;
 * only handlers that need the exchange (proxying, steps) pay for one. Tracks in-flight
 * exchanges so a drain can wait for them. With worker.json `listen.tls`, a second app
 * (uWS's SSLApp) serves the same handler over TLS, its server names following the
 * published certificates (tls-names.ts).
 */
export class DataServer {
  private readonly app = uws.App();
  private listenSocket: us_listen_socket | null = null;
  private tls: TlsListener | null = null;
  private inFlight = 0;
  private draining = false;
  private idleWaiters: (() => void)[] = [];
  /** The port listened on, for X-Forwarded-Port ('' until listening). */
  private port = '';
  private tlsPort = '';

  /** `refusal` makes the envelope for an answer the data server gives itself. */
  constructor(
    route: Router,
    refusal: (code: ErrorCode) => StaticReply,
    log: Logger,
    /** worker.json's path policy and trusted proxies. */
    readonly settings: DataPlaneSettings,
  ) {
    const paths = settings.paths;
    let lastValidHost = '';
    const proxies = new TrustedProxies(settings.trustedProxies);
    const limits = settings.limits;
    const events = new LimitEvents(log);
    const guard = new ConnectionGuard(limits, events, refusal);
    this.guard = guard;
    this.limits = limits;
    guard.attach(this.app);
    setIdleTimeout(this.app, limits.idleTimeoutS);
    const closing = () => this.draining;
    const finished = () => {
      if (--this.inFlight === 0 && this.idleWaiters.length) for (const w of this.idleWaiters.splice(0)) w();
    };
    const handler = (tls: boolean): Handler => (res, req) => {
      let ex: Exchange | undefined;
      let method = '';
      requestCallback.enter();
      try {
        if (guard.candidates > 0) guard.requestFrom(res);
        method = req.getCaseSensitiveMethod();
        const url = req.getUrl();
        const refused = overLimit(req, url, limits, events);
        if (refused !== null) return replyStatic(res, refusal(refused), true, method === 'HEAD');
        // One path per request, decided here: the route table matches it, steps read it
        // as ex.path, the upstream receives it (normalize-path.ts). null: refused.
        const path = normalizePath(url, paths);
        const host = req.getHeader('host');
        // Most requests repeat the previous Host: a string compare instead of the scan.
        let hostOk = host === lastValidHost;
        if (!hostOk && isValidHost(host)) {
          hostOk = true;
          lastValidHost = host;
        }
        const target = path === null || !hostOk || !methodOk(method) ? refusal('Svc.Data.BadRequest') : route(method, path, host, tls);
        const head = method === 'HEAD';
        // A fixed answer skips the Exchange, unless the request's framing must be refused first.
        if (typeof target !== 'function' && (!target.large || head) && framingOk(req.getHeader('transfer-encoding'))) {
          return replyStatic(res, target, this.draining, head);
        }
        this.inFlight++;
        ex = tls
          ? new Exchange(res, req, method, path ?? '/', closing, finished, proxies, this.tlsPort, limits, events, 'https')
          : new Exchange(res, req, method, path ?? '/', closing, finished, proxies, this.port, limits, events);
        if (ex.badFraming) ex.sendStatic(refusal('Svc.Data.BadFraming'));
        else if (ex.hostRepeated) ex.sendStatic(refusal('Svc.Data.BadRequest'));
        else if (typeof target === 'function') target(ex);
        else ex.sendStatic(target); // a large fixed body needs tryEnd and a writable callback
      } catch (err) {
        // No exception may escape into uWS: answer 500 and keep serving.
        log.error({ err }, 'data-plane handler threw');
        const r = refusal('Svc.Internal');
        if (ex) ex.sendHead(500, r.body, r.headers);
        else replyStatic(res, r, true, method === 'HEAD');
      } finally {
        requestCallback.leave();
      }
    };
    this.handle = handler(false);
    this.tlsHandle = handler(true);
    this.app.any('/*', this.handle);
  }

  /** The per-request callback uWS calls (bench/hot-path.mjs drives it with fakes). */
  readonly handle: Handler;
  private readonly tlsHandle: Handler;
  private readonly guard: ConnectionGuard;
  private readonly limits: DataPortLimits;

  /** Listens with TLS too, serving `tls`; `box` opens sealed private keys (secrets.keyEnv). */
  listenTls(host: string, port: number, tls: CompiledServerTls | undefined, box: SecretBox | null, log: Logger): boolean {
    this.tlsPort = String(port);
    const setup = (app: TemplatedApp) => {
      this.guard.attach(app);
      setIdleTimeout(app, this.limits.idleTimeoutS);
    };
    this.tls = new TlsListener(host, port, this.tlsHandle, setup, box, log);
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

  /** Stops accepting, then resolves when in-flight exchanges finish or the grace period ends. */
  drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    this.tls?.stop();
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, graceMs);
      this.idleWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}


