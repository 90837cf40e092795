import type { WebSocketBehavior } from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket } from './uws.js';
import { WEBSOCKET_MAX_MESSAGE_BYTES } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import type { EngineHandlers, WebSocketPeer } from '../contract.js';

type UserData = { relay: WebSocketPeer };

/**
 * The client side of the worker's proxied WebSockets on uWS: its `ws` behavior, each event
 * handed to the socket's relay (websocket-relay.ts). The behavior is one for every route:
 * uWS bounds each message at the largest size a route may allow, the relay applies the
 * route's own bound, idle timer and backpressure.
 */
export function webSocketBehavior(
  handlers: EngineHandlers,
  log: Logger,
  upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void,
): WebSocketBehavior<UserData> {
  // No exception may escape into uWS: a failing handler is logged and its socket closed.
  const guarded =
    <A extends unknown[]>(fn: (ws: WebSocket<UserData>, ...a: A) => void) =>
    (ws: WebSocket<UserData>, ...a: A) => {
      try {
        fn(ws, ...a);
      } catch (err) {
        log.error({ err }, 'websocket handler threw');
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
      const relay = ws.getUserData().relay;
      handlers.webSocketOpened(relay);
      relay.attach(ws);
    }),
    message: guarded((ws, message: ArrayBuffer, isBinary: boolean) => ws.getUserData().relay.fromClient(message, isBinary)),
    drain: guarded((ws) => ws.getUserData().relay.clientDrained()),
    ping: guarded((ws, message: ArrayBuffer) => ws.getUserData().relay.clientPing(message)),
    pong: guarded((ws) => ws.getUserData().relay.clientPong()),
    close: (ws, code, message) => {
      const relay = ws.getUserData().relay;
      try {
        relay.clientClosed(code, message);
      } catch (err) {
        log.error({ err }, 'websocket close handler threw');
      }
      handlers.webSocketClosed(relay);
    },
  };
}
