import type { CompiledServerTls } from '../contracts/generation.js';
import type { Arrival, DataEngine, Downstream, EngineFactory, RequestHead } from './engine/contract.js';
import { OpenWebSockets } from './open-websockets.js';
import { Exchange } from './exchange.js';
import type { ExchangeEnd } from './exchange-end.js';
import { framingOk } from './request-framing.js';
import { isGrpcType } from './request-head.js';
import { GrpcCall } from './grpc/grpc-call.js';
import type { StaticReply } from './response-head.js';
import type { Logger } from '../shared/logger.js';
import { normalizePath } from '../shared/normalize-path.js';
import { isValidHost } from './host-header.js';
import type { DataPlaneSettings } from '../contracts/ipc.js';
import { TrustedProxies } from './trusted-proxies.js';
import { methodOk, overLimit } from './request-checks.js';
import { LimitEvents } from './limit-events.js';
import type { ErrorCode } from '../shared/errors.js';
import type { RequestIds } from './observe/request-ids.js';
import type { RequestObserver } from './observe/observer.js';
import { clientAddress } from './client-address.js';
import type { WebSocketRelay } from './websocket-relay.js';

/** How long a drain waits after closing WebSockets, for the close frames to reach both peers. */
const CLOSE_FLUSH_MS = 200;

/** A draining worker's connections count as quiet after this long without a request. */
const DRAIN_QUIET_MS = 100;

/** What a request goes to: a fixed reply, or a handler that needs the whole exchange. */
export type Target = StaticReply | ((ex: Exchange) => void);

/** Decides from the method, the normalised path, Host and whether the request came over TLS, synchronously; `rid`: the request's id ('' without ids). */
export type Router = (method: string, path: string, host: string, tls: boolean, rid: string) => Target;

/** How requests are named and observed (observe/): ids null without worker.json `requestId`. */
export interface Observation {
  ids: RequestIds | null;
  observer: RequestObserver;
}

/**
 * The data port, engine-neutral: the engine (engine/contract.ts) hands each request's head
 * and downstream to `serve`, which judges the request, routes it, and answers a fixed reply
 * at once or gives the request to its owner, an Exchange. Only handlers that need the
 * exchange (proxying, steps) pay for one. Tracks in-flight exchanges and open WebSockets
 * so a drain can wait for them.
 */
export class DataServer {
  private readonly engine: DataEngine;
  private inFlight = 0;
  /** Requests seen, for a drain to tell a quiet kept-alive connection from one still sending. */
  private arrivals = 0;
  private draining = false;
  private idleWaiters: (() => void)[] = [];
  private readonly webSockets = new OpenWebSockets();
  /** Open gRPC calls: a drain's end closes them with UNAVAILABLE rather than cutting them. */
  private readonly grpcCalls = new Set<Exchange>();

  /** `refusal` makes the envelope for an answer the data server gives itself, with the request's id as its traceId. */
  constructor(
    route: Router,
    refusal: (code: ErrorCode, rid: string) => StaticReply,
    log: Logger,
    /** worker.json's path policy and trusted proxies. */
    readonly settings: DataPlaneSettings,
    { ids, observer }: Observation,
    engine: EngineFactory,
  ) {
    const paths = settings.paths;
    let lastValidHost = '';
    const proxies = new TrustedProxies(settings.trustedProxies);
    const limits = settings.limits;
    const events = new LimitEvents(log);
    const watching = !observer.idle;
    const recording = observer.recording;
    const clientOf = (peer: string, req: RequestHead) => (proxies.none ? peer : clientAddress(peer, req.getHeader('x-forwarded-for') || undefined, proxies.trusts));
    const closing = () => this.draining;
    const idle = () => {
      if (this.inFlight === 0 && this.webSockets.size === 0 && this.idleWaiters.length) for (const w of this.idleWaiters.splice(0)) w();
    };
    const finished = (ex: ExchangeEnd) => {
      --this.inFlight;
      if (ex.grpc !== null) this.grpcCalls.delete(ex as Exchange);
      if (watching) observer.exchangeEnded(ex);
      idle();
    };
    this.webSockets.onEmpty = idle;
    // `arrival.upgrade` is set for a WebSocket handshake: its route proxies it or refuses it.
    const serve = (req: RequestHead, down: Downstream, arrival: Arrival): void => {
      this.arrivals++;
      let ex: Exchange | undefined;
      let method = '';
      let rid = '';
      let path: string | null = null;
      try {
        method = req.getCaseSensitiveMethod();
        if (ids !== null) rid = ids.assign(req, down);
        const url = req.getUrl();
        const refused = overLimit(req, url, limits, events);
        if (refused !== null) {
          const r = refusal(refused, rid);
          // Observed first: a record reads the peer address, which an engine refuses once the answer ended.
          // A target refused for its length is not logged ('': neither path nor query); others are, as sent.
          if (watching) observer.fixedAnswered(r, req, down, method, refused === 'Svc.Data.TargetTooLong' ? '' : url, rid, clientOf);
          down.replyStatic(r, rid === '' ? null : ids!.echo(rid), true, method === 'HEAD');
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
        // A malformed request closes its connection after the refusal, as nginx does: what follows it is not trusted.
        const malformed = path === null || !hostOk || !methodOk(method);
        let target = malformed || path === null ? refusal('Svc.Data.BadRequest', rid) : route(method, path, host, arrival.tls, rid);
        // A handshake to a fixed answer is refused, not answered as if it were a plain GET; error envelopes stay as they are.
        if (arrival.upgrade && typeof target !== 'function' && target.status < 400) target = refusal('Svc.Data.UpgradeRefused', rid);
        const head = method === 'HEAD';
        // A fixed answer skips the Exchange, unless the request's framing must be refused first,
        // or it is a refusal a gRPC call reads as a grpc-status (an Exchange writes it).
        if (typeof target !== 'function' && (!target.large || head) && framingOk(req.getHeader('transfer-encoding')) && (target.code === undefined || !isGrpcType(req.getHeader('content-type')))) {
          if (watching) observer.fixedAnswered(target, req, down, method, path ?? url, rid, clientOf);
          down.replyStatic(target, rid === '' ? null : ids!.echo(rid), this.draining || malformed, head);
          return;
        }
        this.inFlight++;
        ex = new Exchange(down, req, method, path ?? '/', closing, finished, proxies, arrival.port, limits, events, arrival.tls ? 'https' : 'http');
        ex.wantsUpgrade = arrival.upgrade;
        if (rid !== '') ex.setRequestId(ids!.header, rid);
        if (ex.grpcRequest) {
          ex.grpc = new GrpcCall(ex.header('content-type') ?? '', arrival.protocol === 'h2');
          this.grpcCalls.add(ex);
        }
        // The socket's address is gone when the exchange ends: a sampled request's record reads it now.
        if (recording && observer.sampled()) {
          ex.logged = true;
          void ex.clientAddress;
        }
        if (ex.badFraming) ex.sendStatic(refusal('Svc.Data.BadFraming', rid));
        else if (ex.hostRepeated) ex.sendStatic(refusal('Svc.Data.BadRequest', rid));
        else if (typeof target === 'function') target(ex);
        else {
          // A large fixed body needs the engine's backpressure; it is still its route's answer.
          if (target.meter !== undefined) ex.meter = target.meter;
          if (target.code !== undefined && ex.grpc !== null) ex.replyError(target.code, target.traceId);
          else ex.sendStatic(target);
        }
      } catch (err) {
        // No exception may escape into the engine: answer 500 and keep serving.
        log.error({ err }, 'data-plane handler threw');
        const r = refusal('Svc.Internal', rid);
        if (ex) {
          ex.sendHead(500, r.body, r.headers);
          ex.finish(); // its generation no longer counts it, and its trace ends
        } else down.replyStatic(r, rid === '' ? null : ids!.echo(rid), true, method === 'HEAD');
      }
    };
    this.handle = serve;
    this.engine = engine(
      {
        request: serve,
        refusal: (code) => refusal(code, ''),
        events,
        webSocketOpened: (peer) => this.webSockets.opened(peer as WebSocketRelay),
        webSocketClosed: (peer) => this.webSockets.closed(peer as WebSocketRelay),
      },
      limits,
      log,
    );
  }

  /** The per-request callback every engine calls (bench/hot-path.mjs drives it with fakes). */
  readonly handle: (req: RequestHead, down: Downstream, arrival: Arrival) => void;

  /** Connections open on the data port (and the TLS port), as the engine counts them. */
  get connections(): number {
    return this.engine.connections;
  }

  /** Listens with TLS too, serving `tls` with the ALPN protocols worker.json allows. */
  listenTls(host: string, port: number, tls: CompiledServerTls | undefined): Promise<boolean> {
    const clientCertificates = this.settings.tls?.clientCertificates;
    return this.engine.listen({ host, port, tls: { protocols: this.settings.tlsProtocols, certificates: tls, ...(clientCertificates ? { clientCertificates } : {}) } });
  }

  /** A new generation's certificates, for new TLS handshakes. */
  updateCertificates(tls: CompiledServerTls | undefined): void {
    this.engine.updateCertificates(tls);
  }

  listen(host: string, port: number): Promise<boolean> {
    return this.engine.listen({ host, port, h2c: this.settings.h2c });
  }

  /**
   * Stops accepting, then resolves when in-flight exchanges finish and open WebSockets
   * close, or when the grace period ends: WebSockets still open then are closed with 1001
   * on both sides, gRPC calls still open end with UNAVAILABLE (Svc.Data.Draining), and
   * their last frames get a moment to leave before the worker exits.
   */
  /**
   * Stops accepting, then resolves once nothing is in flight and the connections left are
   * quiet: every request on a kept-alive connection is answered with a close meanwhile, so a
   * client that keeps sending moves to another worker, and only connections silent for a
   * poll are cut at the exit (uWS cannot close an idle connection from outside a request).
   * Past `graceMs`, WebSockets and gRPC calls are closed and it resolves anyway.
   */
  drain(graceMs: number): Promise<void> {
    this.draining = true;
    this.engine.stopAccepting();
    const settled = () => this.inFlight === 0 && this.webSockets.size === 0;
    if (settled() && this.engine.connections === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let seen = this.arrivals;
      const quiet = setInterval(() => {
        if (settled() && (this.engine.connections === 0 || seen === this.arrivals)) done();
        seen = this.arrivals;
      }, DRAIN_QUIET_MS);
      const t = setTimeout(() => {
        clearInterval(quiet);
        if (this.webSockets.size === 0 && this.grpcCalls.size === 0) return resolve();
        this.webSockets.closeAll(1001, 'gateway shutting down');
        for (const ex of [...this.grpcCalls]) ex.endGrpc(503, 'Svc.Data.Draining');
        setTimeout(resolve, CLOSE_FLUSH_MS);
      }, graceMs);
      const done = () => {
        clearTimeout(t);
        clearInterval(quiet);
        resolve();
      };
      this.idleWaiters.push(() => {
        if (this.engine.connections === 0) done();
      });
    });
  }

}
