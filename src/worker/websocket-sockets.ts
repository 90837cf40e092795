import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket } from './uws.js';
import type { WebSocketBehavior } from 'uWebSockets.js';
import { WEBSOCKET_MAX_MESSAGE_BYTES } from '../contracts/generation.js';
import type { Logger } from '../shared/logger.js';
import type { WebSocketRelay } from './websocket-relay.js';

type UserData = { relay: WebSocketRelay };

/** How often the idle timers are checked: a route's idleTimeoutMs is kept to within this. */
const IDLE_SWEEP_MS = 1_000;

/**
 * The client side of the worker's proxied WebSockets: uWS's `ws` behavior, each event handed
 * to the socket's relay (websocket-relay.ts), and the set of open sockets a drain closes.
 * The behavior is one for every route: uWS bounds each message at the largest size a route
 * may allow, the relay applies the route's own bound, idle timer and backpressure.
 */
export class OpenWebSockets {
  private readonly open = new Set<WebSocket<UserData>>();
  private sweep: NodeJS.Timeout | null = null;
  /** Called when the last open WebSocket closed (a drain waits for it). */
  onEmpty: (() => void) | null = null;

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.open.size;
  }

  behavior(upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void): WebSocketBehavior<UserData> {
    // No exception may escape into uWS: a failing handler is logged and its socket closed.
    const guarded =
      <A extends unknown[]>(fn: (ws: WebSocket<UserData>, ...a: A) => void) =>
      (ws: WebSocket<UserData>, ...a: A) => {
        try {
          fn(ws, ...a);
        } catch (err) {
          this.log.error({ err }, 'websocket handler threw');
          ws.getUserData().relay.closeBoth(1011, 'gateway error');
        }
      };
    return {
      maxPayloadLength: WEBSOCKET_MAX_MESSAGE_BYTES,
      // The route's idle timer is the relay's; uWS sends no pings of its own.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      // The relay pauses the upstream at a far lower level: reaching this is a bug, closed rather than dropped.
      maxBackpressure: 4 * WEBSOCKET_MAX_MESSAGE_BYTES,
      closeOnBackpressureLimit: true,
      upgrade,
      open: guarded((ws) => {
        this.open.add(ws);
        this.sweep ??= setInterval(() => this.closeIdle(), IDLE_SWEEP_MS).unref();
        ws.getUserData().relay.attach(ws);
      }),
      message: guarded((ws, message: ArrayBuffer, isBinary: boolean) => ws.getUserData().relay.fromClient(message, isBinary)),
      drain: guarded((ws) => ws.getUserData().relay.clientDrained()),
      ping: guarded((ws, message: ArrayBuffer) => ws.getUserData().relay.clientPing(message)),
      pong: guarded((ws) => ws.getUserData().relay.clientPong()),
      close: (ws, code, message) => {
        this.open.delete(ws);
        try {
          ws.getUserData().relay.clientClosed(code, message);
        } catch (err) {
          this.log.error({ err }, 'websocket close handler threw');
        }
        if (this.open.size === 0) {
          if (this.sweep) clearInterval(this.sweep);
          this.sweep = null;
          this.onEmpty?.();
        }
      },
    };
  }

  /** Ends every open WebSocket with `code` on both sides (a drain's end: 1001). */
  closeAll(code: number, reason: string): void {
    for (const ws of [...this.open]) ws.getUserData().relay.closeBoth(code, reason);
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const ws of [...this.open]) {
      const relay = ws.getUserData().relay;
      if (now - relay.lastActivity > relay.settings.idleTimeoutMs) relay.closeBoth(1001, 'idle timeout');
    }
  }
}
