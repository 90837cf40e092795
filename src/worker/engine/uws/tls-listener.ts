import type { CompiledServerTls } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import { uws, type TemplatedApp, type us_listen_socket } from './uws.js';
import { loadServerName } from './tls-server-name.js';

/** Names the default certificate may be added under on demand (one TLS context each): a bound on a flood of made-up SNI names. */
const MAX_DEFAULTED_NAMES = 1_000;

interface Listening {
  app: TemplatedApp;
  socket: us_listen_socket | null;
  /** Open connections, counted through the app's filter. */
  open: number;
  retired: boolean;
}

/**
 * The TLS data port. uWS gives each server name (SNI) its own TLS context and router, and
 * frees that router when the name is removed while connections made with it may still
 * send requests (a crash, measured). So a set of certificates is never changed in place:
 * a publish that changes it starts a new SSLApp with the new set on the same port
 * (SO_REUSEPORT), then closes the old one's listening socket. New handshakes get the new
 * certificates; open connections finish on the app they started on, which is closed once
 * its last connection ends.
 */
export class TlsListener {
  private current: Listening | null = null;
  private signature = '';

  constructor(
    private readonly host: string,
    private readonly port: number,
    /** The data port's routes, registered for each server name. */
    private readonly routes: (app: TemplatedApp) => void,
    /** What every app gets besides its names: the connection guard and idle timers. */
    private readonly setup: (app: TemplatedApp) => void,
    private readonly log: Logger,
  ) {}

  /** Serves `tls` from the next handshake on; false when the port could not be bound. */
  update(tls: CompiledServerTls | undefined): boolean {
    const signature = JSON.stringify([Object.entries(tls?.hosts ?? {}).map(([h, id]) => [h, tls!.certs[id]!.fingerprint256]), tls?.default ? tls.certs[tls.default]!.fingerprint256 : null]);
    if (this.current && signature === this.signature) return true;
    const next = this.build(tls);
    if (!next.socket) {
      this.log.error({ host: this.host, port: this.port }, 'TLS: cannot listen with the new certificates; the previous ones still serve');
      return false;
    }
    const old = this.current;
    this.current = next;
    this.signature = signature;
    if (old) this.retire(old);
    return true;
  }

  /** Stops accepting (drain); open connections finish. */
  stop(): void {
    if (this.current?.socket) uws.us_listen_socket_close(this.current.socket);
    if (this.current) this.current.socket = null;
  }

  private build(tls: CompiledServerTls | undefined): Listening {
    const app = uws.SSLApp({});
    const l: Listening = { app, socket: null, open: 0, retired: false };
    this.setup(app);
    app.filter((_res, change) => {
      l.open += (change as number) < 0 ? -1 : 1;
      if (l.retired && l.open === 0) app.close();
    });
    for (const [name, id] of Object.entries(tls?.hosts ?? {})) loadServerName(app, name, tls!.certs[id]!, id, this.routes, this.log);
    const fallback = tls?.default;
    if (fallback) {
      let added = 0;
      // A handshake for a name no certificate serves: the default certificate under that name, up to a bound.
      app.missingServerName((name) => {
        if (added >= MAX_DEFAULTED_NAMES || !/^[A-Za-z0-9.-]{1,253}$/.test(name)) return;
        added++;
        loadServerName(app, name.toLowerCase(), tls!.certs[fallback]!, fallback, this.routes, this.log);
      });
    }
    app.listen(this.host, this.port, (socket) => {
      l.socket = socket || null;
    });
    return l;
  }

  private retire(l: Listening): void {
    if (l.socket) uws.us_listen_socket_close(l.socket);
    l.socket = null;
    l.retired = true;
    if (l.open === 0) l.app.close();
  }
}
