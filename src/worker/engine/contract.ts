/**
 * The data-plane engine contract: what the worker's engine-neutral request owner
 * (the Exchange, worker/exchange.ts) and the data server need from the thing that speaks
 * HTTP on the data port. Two engines implement it (worker/engine/): `uws`
 * (uWebSockets.js, HTTP/1.1) and `node` (node:http and node:http2: HTTP/1.1, h2 with ALPN,
 * h2c). Nothing outside worker/engine/ imports uWebSockets.js or node:http2.
 */
import type { StaticReply } from '../response-head.js';
import type { ClientCertificateSettings, DataPortLimits } from '../../contracts/ipc.js';
import type { ClientCertificate } from '../../contracts/client-certificate.js';
import type { CompiledServerTls } from '../../contracts/generation.js';
import type { LimitEvents } from '../limit-events.js';
import type { Logger } from '../../shared/logger.js';

// The engines' names and the ALPN protocols a TLS listener may offer: one definition, worker.json's (shared/engine-choice.ts).
import type { EngineName, TlsProtocol } from '../../shared/engine-choice.js';
export type { EngineChoice, EngineName, TlsProtocol } from '../../shared/engine-choice.js';

/**
 * A request's head as the engine parsed it. Valid only during the engine's request
 * callback (uWS frees it after): whatever outlives the callback is copied. Names are
 * lower case; on h2, `host` is `:authority` and the cookie crumbs come joined with `; `.
 */
export interface RequestHead {
  /** The method as the client sent it (case kept: `get` is refused, not folded). */
  getCaseSensitiveMethod(): string;
  /** The request-target's path, before any `?`. */
  getUrl(): string;
  /** After `?`; undefined when the target has none. */
  getQuery(): string | undefined;
  /** The first value of a header; '' when absent. */
  getHeader(lowerCaseName: string): string;
  /** Every header line in order (repeated names repeat). */
  forEach(cb: (lowerCaseName: string, value: string) => void): void;
}

/** A response head as the request owner gives it; each engine writes it its own way (an HTTP/1.1 head block, h2 HEADERS). */
export interface ResponseHead {
  status: number;
  /** The reason phrase; h2 has none and drops it. */
  reason: string;
  headers: readonly (readonly [string, string])[];
  /** The same head as one HTTP/1.1 block (status line and header lines), when prepared ahead (a StaticReply's): HTTP/1.1 engines may write it as it is. */
  block?: string;
}

/**
 * A response's trailer fields (gRPC's grpc-status and grpc-message), names lower case and
 * never a framing or connection-specific one (the owner filters them: trailers.ts).
 */
export type Trailers = readonly (readonly [string, string])[];

/** The request id's header, echoed on every answer (worker.json `requestId`); null without. */
export type IdEcho = readonly [name: string, value: string] | null;

/** Told whether the client takes bytes: a write held longer than limits.sendTimeoutMs cuts the connection (send-stall.ts). */
export interface StallWatch {
  /** A write is held; `progress` grows when the client took bytes since (a held wait starts again). */
  held(progress: number): void;
  clear(): void;
}

/**
 * What a downstream tells its response's owner (the Exchange implements it): one object
 * for the whole request, so the hot path allocates no callbacks to pass.
 */
export interface ResponseSink {
  /** The response's last byte went out (possibly before the call that sent it returns). */
  responseCompleted(): void;
  /** The stall watch of this response's held writes, made on first need. */
  stallWatch(): StallWatch;
}

/**
 * The client side of one proxied WebSocket as an engine gives it to the relay
 * (worker/websocket-relay.ts): whole messages, the engine's own send buffer.
 */
export interface ClientWebSocket {
  send(data: Buffer, isBinary: boolean): void;
  ping(data: Buffer): void;
  /** Bytes sent and not yet taken by the client. */
  getBufferedAmount(): number;
  /** A close frame (none for no code), then the close. */
  end(code?: number, reason?: string | Buffer): void;
}

/** What an engine tells a relay of its client side. */
export interface WebSocketPeer {
  attach(client: ClientWebSocket): void;
  fromClient(message: ArrayBuffer | Buffer, isBinary: boolean): void;
  clientDrained(): void;
  clientPing(data: ArrayBuffer | Buffer): void;
  clientPong(): void;
  clientClosed(code: number, reason: ArrayBuffer | Buffer): void;
  closeBoth(code: number, reason: string): void;
}

/**
 * One request's downstream as the request owner drives it. Once the response ended or
 * the client left, nothing may be called but remoteAddress (which then answers '').
 * The protocol rules of each engine (uWS's cork buffer and tryEnd, h2 flow control,
 * connection-specific headers) live behind it.
 */
export interface Downstream {
  /** The socket peer's address as text (IPv4 dotted, IPv6 compressed). */
  remoteAddress(): string;
  /**
   * The client certificate the TLS listener verified (h2: its session's); null on the plain
   * port, without one, or with one the CAs do not verify. Asked only by routes that read it.
   */
  clientCertificate(): ClientCertificate | null;
  /** The client left (or the gateway cut the connection) before the response ended. Called at most once. */
  onAborted(cb: () => void): void;
  /**
   * Request body pieces: an ArrayBuffer is valid only during the call (uWS's: copy it), a
   * Buffer is the receiver's to keep (node's). Register synchronously in the request callback.
   */
  onData(cb: (chunk: ArrayBuffer | Buffer, last: boolean) => void): void;
  /** Stop and restart reading the request body (backpressure). */
  pause(): void;
  resume(): void;
  /**
   * A whole response. `body` null: no body (HEAD, 204, 304), `contentLength` reported if
   * given. `close`: the connection closes after it (HTTP/1.1 `connection: close`; h2:
   * no effect on the connection). `sink` is told when the last byte went out, and watches
   * a held write.
   */
  reply(head: ResponseHead, id: IdEcho, body: string | Buffer | null, contentLength: number | undefined, close: boolean, sink: ResponseSink): void;
  /** A reply fixed at compile time (its head block prepared for HTTP/1.1), from inside the request callback. `headOnly`: HEAD. */
  replyStatic(r: StaticReply, id: IdEcho, close: boolean, headOnly: boolean): void;
  /**
   * A chunk of a streamed body, the head first when `head` is given. `total`: the body's
   * length when known (the response ends when `total` bytes are out), null for chunked.
   * Returns false under backpressure: `onDrain` runs once the client took it, and the
   * caller produces nothing until then. `sink` is told when a known-length body completed.
   */
  write(head: ResponseHead | null, id: IdEcho, chunk: Buffer, total: number | null, close: boolean, onDrain: () => void, sink: ResponseSink): boolean;
  /**
   * Ends a streamed response (the head first when given), with `trailers` after the body
   * where the protocol carries them: h2 sends them as a trailing HEADERS frame; the
   * HTTP/1.1 engines write none (gRPC-Web carries its trailers in the body instead).
   * Returns false while a known-length body's tail still waits (the sink is told when it completed).
   */
  end(head: ResponseHead | null, id: IdEcho, close: boolean, trailers?: Trailers | null): boolean;
  /** Cuts the connection (h2: resets the stream): the only honest end of a response that failed after its head. */
  close(): void;
  /**
   * Completes a WebSocket handshake with 101 and `protocol`; the engine then calls
   * `peer.attach` with the client side. False when this request cannot upgrade (not a
   * handshake, or an h2 stream).
   */
  upgrade(peer: WebSocketPeer, key: string, protocol: string, id: IdEcho): boolean;
}

/** Where a request came in. */
export interface Arrival {
  /** It came over TLS (X-Forwarded-Proto https). */
  tls: boolean;
  /** The listener's port, as X-Forwarded-Port gives it. */
  port: string;
  /** 'h2' for an HTTP/2 stream, else '1.1'. */
  protocol: '1.1' | 'h2';
  /** A WebSocket handshake the engine can complete (Downstream.upgrade). */
  upgrade: boolean;
}

/** What an engine calls: the engine-neutral data server (worker/data-server.ts). */
export interface EngineHandlers {
  /** One request. No exception escapes from it. */
  request(head: RequestHead, down: Downstream, arrival: Arrival): void;
  /** A refusal the engine sends itself (the connection cap, the first head's deadline): its fixed answer. */
  refusal(code: 'Svc.Data.TooManyConnections' | 'Svc.Data.HeadTimeout' | 'Svc.Data.BadRequest' | 'Svc.Data.BadFraming' | 'Svc.Data.HeadTooLarge'): StaticReply;
  /** Where an engine reports a limit it enforced (the connection cap, a head deadline): a log line and a metric. */
  readonly events: LimitEvents;
  /** A WebSocket opened and closed (a drain waits for open ones). */
  webSocketOpened(peer: WebSocketPeer): void;
  webSocketClosed(peer: WebSocketPeer): void;
}

/** A listener as the engine is asked for it. */
export interface ListenOptions {
  host: string;
  port: number;
  /** TLS with these ALPN protocols, its certificates the published ones (updateCertificates). */
  tls?: { protocols: TlsProtocol[]; certificates: CompiledServerTls | undefined; clientCertificates?: ClientCertificateSettings };
  /** Cleartext HTTP/2 with prior knowledge beside HTTP/1.1 (worker.json `listen.h2c`). */
  h2c?: boolean;
}

/** worker.json `limits`: an engine enforces the per-connection ones (the cap, the first head's deadline, idle, head size, HTTP/2's). */
export type EngineLimits = DataPortLimits;

/** How an engine is made (worker/engine/load-engine.ts picks one by name). */
export type EngineFactory = (handlers: EngineHandlers, limits: EngineLimits, log: Logger) => DataEngine;

/** A data-plane engine: listeners, connection accounting and drain. */
export interface DataEngine {
  readonly name: EngineName;
  /** Starts a listener; resolves false when the address cannot be bound. */
  listen(options: ListenOptions): Promise<boolean>;
  /** New certificates for new TLS handshakes. */
  updateCertificates(certificates: CompiledServerTls | undefined): void;
  /** Open client connections on every listener. */
  readonly connections: number;
  /** Stops accepting; HTTP/2 connections get GOAWAY, an HTTP/1.1 one closes after its next answer; open requests go on. */
  stopAccepting(): void;
}
