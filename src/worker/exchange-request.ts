import type { Downstream, IdEcho, RequestHead } from './engine/contract.js';
import type { ClientCertificate, StepRequest } from '../steps/step.js';
import { clientAddress, dropIdentityHeaders } from './client-address.js';
import { BAD_FRAMING, GRPC, HAS_BODY, HOST_REPEATED, IDENTITY, copyRequestHead } from './request-head.js';
import type { GrpcCall } from './grpc/grpc-call.js';
import type { TrustedProxies } from './trusted-proxies.js';
import type { QueryPair } from '../shared/url-query.js';
import { ParsedOnDemand } from '../shared/parsed-on-demand.js';

/**
 * The request side of an Exchange, as steps read it: copied from the engine's request head
 * during its synchronous callback (request-head.ts), without the identity headers of a
 * peer that is not a trusted proxy; the peer and the client address are read lazily.
 */
export class ExchangeRequest implements StepRequest {
  readonly method: string;
  /** The raw query after '?', or null when the target has no '?' at all (a bare '?' is ''). */
  readonly query: string | null;
  /** Flat `name, value, name, value, …` as undici takes them; names lower case (uWS delivers them so). */
  readonly headers: string[] = [];
  /** The request announced a body (Content-Length other than 0, or Transfer-Encoding). */
  readonly hasBody: boolean;
  /** A Transfer-Encoding whose last coding is not chunked, or more than one Content-Length: answered 400, never forwarded. */
  readonly badFraming: boolean;
  /** The one path of the request: routes matched it, steps read it, the upstream receives it (normalize-path.ts). */
  readonly path: string;
  /** More than one Host header: answered 400, never routed further. */
  readonly hostRepeated: boolean;
  /** Its content-type is gRPC's (or gRPC-Web's): the data server gives it a GrpcCall. */
  readonly grpcRequest: boolean;
  /** A gRPC call: how its refusals are answered and its status is known (grpc/grpc-call.ts); null for any other request. */
  grpc: GrpcCall | null = null;
  aborted = false;
  done = false;
  /** The request's id, and the header it goes up and back in (worker.json `requestId`); '' and null without. */
  requestId = '';
  requestIdHeader: string | null = null;
  /** The id's header and value, echoed on every head this exchange writes (null without an id). */
  idEcho: IdEcho = null;
  /** The query and cookies, parsed when a step (key-auth, hashing, …) first asks: most routes never do. */
  private parsed: ParsedOnDemand | null = null;
  private peer: string | null = null;
  /** The verified client certificate; undefined until a step first asks. */
  private cert: ClientCertificate | null | undefined = undefined;
  private client: string | null = null;
  /** The X-Forwarded-For of a peer that is not a trusted proxy, dropped from `headers`: only clientAddressTrusting reads it. */
  private droppedChain: string | undefined;

  constructor(
    readonly down: Downstream,
    req: RequestHead,
    method: string,
    path: string,
    /** worker.json's trustedProxies. */
    private readonly proxies: TrustedProxies,
    /** The data port, as X-Forwarded-Port gives it ('' when unknown). */
    readonly localPort: string,
    /** How the request came: X-Forwarded-Proto. */
    readonly scheme: 'http' | 'https',
  ) {
    this.method = method;
    this.path = path;
    this.query = req.getQuery() ?? null;
    const head = copyRequestHead(req, this.headers);
    // The peer is read (and judged) only when the client named itself: most requests do not.
    if (head & IDENTITY && !proxies.trusts(this.remoteAddress)) this.droppedChain = dropIdentityHeaders(this.headers);
    this.hasBody = (head & HAS_BODY) !== 0;
    this.badFraming = (head & BAD_FRAMING) !== 0;
    this.hostRepeated = (head & HOST_REPEATED) !== 0;
    this.grpcRequest = (head & GRPC) !== 0;
  }

  /** Gives the request its id (the data server's, or one a route's request-id step kept). */
  setRequestId(header: string, id: string): void {
    this.requestId = id;
    this.requestIdHeader = header;
    this.idEcho = [header, id];
  }

  /** The socket peer (never a client-supplied header). Read lazily: most routes never need it. */
  get remoteAddress(): string {
    if (this.peer === null) this.peer = this.aborted || this.done ? '' : this.down.remoteAddress();
    return this.peer;
  }

  /** The client certificate the TLS listener verified; asked of the engine only by routes that read it. */
  get clientCert(): ClientCertificate | null {
    if (this.cert === undefined) this.cert = this.aborted || this.done ? null : this.down.clientCertificate();
    return this.cert;
  }

  /**
   * The client's address (client-address.ts): the socket peer, or behind a trusted proxy
   * the right-most X-Forwarded-For hop that is not one. Decided once, when first asked.
   */
  get clientAddress(): string {
    if (this.client === null) this.client = this.proxies.none ? this.remoteAddress : clientAddress(this.remoteAddress, this.headerList('x-forwarded-for'), this.proxies.trusts);
    return this.client;
  }

  /** The client's address with `also` trusted besides worker.json's trustedProxies (ip-restriction's own list). */
  clientAddressTrusting(also: (ip: string) => boolean): string {
    const chain = this.droppedChain ?? this.headerList('x-forwarded-for');
    return clientAddress(this.remoteAddress, chain, (ip) => also(ip) || this.proxies.trusts(ip));
  }

  get queryPairs(): readonly QueryPair[] {
    return (this.parsed ??= new ParsedOnDemand(this.query, this.headers)).queryPairs;
  }

  cookie(name: string): string | undefined {
    return (this.parsed ??= new ParsedOnDemand(this.query, this.headers)).cookie(name);
  }

  header(name: string): string | undefined {
    const h = this.headers;
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) return h[i + 1];
    return undefined;
  }

  /** Every value of a header that may repeat, joined as one list (RFC 9110 §5.3). */
  headerList(name: string): string | undefined {
    const h = this.headers;
    let out: string | undefined;
    for (let i = 0; i < h.length; i += 2) if (h[i] === name) out = out === undefined ? h[i + 1] : `${out}, ${h[i + 1]}`;
    return out;
  }
}
