import { uws, type us_listen_socket } from './uws.js';
import { Exchange } from './exchange.js';
import type { Logger } from '../shared/logger.js';

export type ExchangeHandler = (ex: Exchange) => void;

/**
 * The data-port server: one uWS app per worker, listening with SO_REUSEPORT (uWS's
 * default on Linux). Tracks in-flight exchanges so a drain can wait for them.
 */
export class DataServer {
  private readonly app = uws.App();
  private listenSocket: us_listen_socket | null = null;
  private inFlight = 0;
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(handler: ExchangeHandler, errorResponse: (ex: Exchange) => void, log: Logger) {
    const closing = () => this.draining;
    const finished = () => {
      if (--this.inFlight === 0 && this.idleWaiters.length) for (const w of this.idleWaiters.splice(0)) w();
    };
    this.app.any('/*', (res, req) => {
      this.inFlight++;
      let ex: Exchange | undefined;
      try {
        ex = new Exchange(res, req, closing, finished);
        handler(ex);
      } catch (err) {
        // No exception may escape into uWS: answer 500 and keep serving.
        log.error({ err }, 'data-plane handler threw');
        if (ex) errorResponse(ex);
        else {
          res.writeStatus('500 Internal Server Error').end('', true);
          finished();
        }
      }
    });
  }

  listen(host: string, port: number): Promise<boolean> {
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
