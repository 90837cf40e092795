import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { WEBSOCKET_MAX_MESSAGE_BYTES } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import type { ClientWebSocket, EngineHandlers, IdEcho, WebSocketPeer } from '../contract.js';

/**
 * The client side of proxied WebSockets on node: `ws` completes the handshake (the
 * subprotocol the owner chose, the request id's header) and each socket's events go to its
 * relay (the WebSocketPeer). One bound for every route, like uWS's: the relay applies the
 * route's own.
 */
export class WebSocketUpgrades {
  private readonly chosen = new WeakMap<IncomingMessage, { protocol: string; id: IdEcho }>();
  private readonly server: WebSocketServer;

  constructor(
    private readonly handlers: EngineHandlers,
    private readonly log: Logger,
  ) {
    this.server = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: WEBSOCKET_MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      handleProtocols: (_offered, req) => this.chosen.get(req)?.protocol || false,
    });
    this.server.on('headers', (headers, req) => {
      const id = this.chosen.get(req)?.id;
      if (id) headers.push(`${id[0]}: ${id[1]}`);
    });
  }

  complete(req: IncomingMessage, socket: Duplex, rest: Buffer, peer: WebSocketPeer, protocol: string, id: IdEcho): void {
    this.chosen.set(req, { protocol, id });
    this.server.handleUpgrade(req, socket, rest, (ws) => this.opened(ws, socket, peer));
  }

  private opened(ws: WebSocket, socket: Duplex, peer: WebSocketPeer): void {
    // No exception may escape into node: a failing relay is logged and both sides closed.
    const guarded = (fn: () => void): void => {
      try {
        fn();
      } catch (err) {
        this.log.error({ err }, 'websocket handler threw');
        try {
          peer.closeBoth(1011, 'gateway error');
        } catch {
          ws.terminate();
        }
      }
    };
    const client: ClientWebSocket = {
      send: (data, isBinary) => ws.send(data, { binary: isBinary }),
      ping: (data) => ws.ping(data),
      getBufferedAmount: () => ws.bufferedAmount,
      end: (code, reason) => {
        try {
          ws.close(code, reason);
        } catch {
          ws.terminate(); // a code ws refuses to send
        }
      },
    };
    ws.on('message', (data, isBinary) => guarded(() => peer.fromClient(data as Buffer, isBinary)));
    ws.on('ping', (data) => guarded(() => peer.clientPing(data)));
    ws.on('pong', () => guarded(() => peer.clientPong()));
    // ws has no drain event of its own: its socket's says the client took the buffered frames.
    socket.on('drain', () => guarded(() => peer.clientDrained()));
    ws.on('error', (err) => this.log.debug({ err: err.message }, 'websocket client error'));
    ws.once('close', (code, reason) => {
      guarded(() => peer.clientClosed(code, reason));
      guarded(() => this.handlers.webSocketClosed(peer));
    });
    guarded(() => this.handlers.webSocketOpened(peer));
    guarded(() => peer.attach(client));
  }
}
