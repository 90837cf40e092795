import type { CompiledServerTls } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import type { Arrival, DataEngine, EngineHandlers, EngineLimits, ListenOptions } from '../contract.js';
import { ConnectionGuard } from './connection-guard.js';
import { RequestCallback } from './request-callback.js';
import { TlsListener } from './tls-listener.js';
import { UwsDownstream } from './uws-downstream.js';
import { webSocketBehavior } from './uws-websockets.js';
import { setIdleTimeout, uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket, type us_socket_context_t } from './uws.js';

/** The uWS engine (HTTP/1.1 only), for worker/engine/load-engine.ts. */
export function createUwsEngine(handlers: EngineHandlers, limits: EngineLimits, log: Logger): DataEngine {
  return new UwsEngine(handlers, limits, log);
}

/**
 * The data port on uWebSockets.js: one uWS app per worker, listening with SO_REUSEPORT
 * (uWS's default on Linux); with a TLS listener, SSLApps whose server names follow the
 * published certificates (tls-listener.ts). uWS speaks HTTP/1.1 only: no ALPN, no h2, and
 * the first head's deadline is kept per address, not per connection (connection-guard.ts).
 */
class UwsEngine implements DataEngine {
  readonly name = 'uws';
  private readonly app = uws.App();
  private readonly guard: ConnectionGuard;
  private readonly inCallback = new RequestCallback();
  private listenSocket: us_listen_socket | null = null;
  private tls: TlsListener | null = null;

  constructor(
    private readonly handlers: EngineHandlers,
    private readonly limits: EngineLimits,
    private readonly log: Logger,
  ) {
    this.guard = new ConnectionGuard(limits, handlers.events, (code) => handlers.refusal(code));
    this.guard.attach(this.app);
    setIdleTimeout(this.app, limits.idleTimeoutS);
  }

  get connections(): number {
    return this.guard.open;
  }

  /** uWS's request callback: every request and handshake of one listener comes through here. */
  private serving(arrival: Arrival, handshake: Arrival): { plain: (res: HttpResponse, req: HttpRequest) => void; upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void } {
    const guard = this.guard;
    const handlers = this.handlers;
    const inCallback = this.inCallback;
    const serve = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t | null): void => {
      inCallback.enter();
      try {
        if (guard.candidates > 0) guard.requestFrom(res);
        handlers.request(req, new UwsDownstream(res, context, inCallback), context === null ? arrival : handshake);
      } finally {
        inCallback.leave();
      }
    };
    return { plain: (res, req) => serve(res, req, null), upgrade: (res, req, context) => serve(res, req, context) };
  }

  listen(options: ListenOptions): Promise<boolean> {
    const { host, port } = options;
    if (options.h2c) return Promise.resolve(false); // refused by validate: the uws engine speaks HTTP/1.1 only
    // Refused by validate too: uWS does not show the peer certificate, so it could verify none for the routes.
    if (options.tls?.clientCertificates) return Promise.resolve(false);
    if (options.tls) {
      const setup = (app: TemplatedApp) => {
        this.guard.attach(app);
        setIdleTimeout(app, this.limits.idleTimeoutS);
      };
      // Each SSLApp (one per certificate set) gets the same routes; built once, shared.
      this.tls = new TlsListener(host, port, this.routesFor(port, true), setup, this.log);
      return Promise.resolve(this.tls.update(options.tls.certificates));
    }
    this.routesFor(port, false)(this.app);
    return new Promise((resolve) => {
      this.app.listen(host, port, (socket) => {
        this.listenSocket = socket || null;
        resolve(Boolean(socket));
      });
    });
  }

  /** The routes of a listener on `port`, for each of its apps (a TLS listener has one per certificate set and server name). */
  private routesFor(port: number, tls: boolean): (app: TemplatedApp) => void {
    const at = String(port);
    const { plain, upgrade } = this.serving({ tls, port: at, protocol: '1.1', upgrade: false }, { tls, port: at, protocol: '1.1', upgrade: true });
    // Requests without a WebSocket key fall through from the ws route to app.any (uWS's own order).
    return (app) => {
      app.ws('/*', webSocketBehavior(this.handlers, this.log, upgrade));
      app.any('/*', plain);
    };
  }

  updateCertificates(certificates: CompiledServerTls | undefined): void {
    this.tls?.update(certificates);
  }

  stopAccepting(): void {
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    this.tls?.stop();
  }
}
