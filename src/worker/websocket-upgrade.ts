import { NO_TARGETS } from './no-targets.js';
import { WebSocket as UpstreamSocket } from 'ws';
import type { IncomingMessage } from 'node:http';
import type { WebSocketSettings } from '../contracts/generation.js';
import { targetParts } from '../shared/target-url.js';
import { tlsOptions } from '../shared/upstream-tls.js';
import type { ClusterPools } from './upstream-pools.js';
import type { RequestOwner } from './request-owner.js';
import { upstreamHeaders } from './upstream-request-headers.js';
import { WebSocketRelay } from './websocket-relay.js';
import { errorType } from '../steps/step.js';
import type { WebSocketRouteCounts } from './websocket-route-counts.js';

/** Node's and OpenSSL's codes for a TLS handshake that failed (an unverified or misnamed certificate, an alert). */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|CERT_)/;

/** An upstream's refusal of the handshake is relayed with at most this much of its body. */
const REFUSAL_BODY_BYTES = 64 * 1024;

/**
 * The handshake of a proxied WebSocket, after the route's request steps passed: the
 * route's cap, the upstream policy (the same one HTTP connections pass), the upstream's
 * own handshake, and only then the client's 101 with the upstream's subprotocol. Any
 * failure before that is an ordinary HTTP answer (an envelope, or the upstream's refusal).
 */
export function openWebSocket(life: RequestOwner, pools: ClusterPools, settings: WebSocketSettings, routeId: string, counts: WebSocketRouteCounts): void {
  const { flow } = life;
  if (!life.answerable) return life.finish();
  if (counts.count(routeId) >= settings.maxConnections) return life.replyError('Svc.Data.WebSocketsFull');
  // The target as written (`host:port`, `http://…`, `https://…`): TLS targets get wss with the cluster's `tls`.
  const target = pools.pick(life);
  if (target === NO_TARGETS) return life.replyError('Svc.Data.NoTargets'); // a DNS cluster before its first addresses
  const address = pools.addressOf(target);
  const { secure, hostPort } = targetParts(address);
  const guard = pools.connectVerdict(hostPort);
  if ('denied' in guard) return life.replyError('Svc.Data.UpstreamDenied');
  const path = flow === null ? life.path : flow.path;
  const query = flow === null ? life.query : flow.query;
  // The handshake is a call of the request's trace (its own span when traced).
  const trace = life.trace;
  const call = trace === null ? null : trace.call('GET', hostPort);
  const traceHeaders = trace === null ? null : { replaced: trace.recording ? call!.traceparent : trace.replaced, fresh: trace.fresh };
  let upstream: UpstreamSocket;
  try {
    upstream = new UpstreamSocket(`${secure ? 'wss' : 'ws'}://${hostPort}${path}${query === null ? '' : `?${query}`}`, subprotocols(life.header('sec-websocket-protocol')), {
      ...(secure ? tlsOptions(pools.spec.tls).options : {}),
      headers: handshakeHeaders(upstreamHeaders(life, flow === null ? null : flow.editPlan(), traceHeaders)),
      perMessageDeflate: false,
      followRedirects: false,
      maxPayload: settings.maxMessageBytes,
      handshakeTimeout: pools.spec.connectMs + pools.spec.headersMs,
      ...(guard.lookup && { lookup: guard.lookup }),
    });
  } catch {
    call?.fail('invalid_request');
    return life.replyError('Svc.Data.BadRequest'); // a subprotocol list `ws` refuses (not tokens, repeated)
  }
  counts.add(routeId);
  const sentAt = performance.now();
  // The handshake's answer, as an HTTP attempt's head: the access log's upstream fields, the target's metrics.
  const answered = (status: number) => {
    life.upstream = address;
    life.upstreamMs = performance.now() - sentAt;
    pools.answered(target, life.upstreamMs, status);
  };
  let counted = true;
  const release = () => {
    if (!counted) return;
    counted = false;
    counts.remove(routeId);
  };
  life.onAbort(() => {
    upstream.terminate();
    release();
    life.finish();
  });
  const failed = (err: Error) => {
    call?.fail(errorType(err));
    release();
    if (!life.answerable) return life.finish(); // the client left: terminate() ended the handshake, not the target
    pools.failed(target, err);
    if (err.name === 'UpstreamDeniedError') life.replyError('Svc.Data.UpstreamDenied');
    else if (TLS_FAILURE.test((err as NodeJS.ErrnoException).code ?? '')) life.replyError('Svc.Data.UpstreamTls');
    else if (err.message.includes('handshake has timed out')) life.replyError('Svc.Data.UpstreamTimeout');
    else life.replyError('Svc.Data.UpstreamUnreachable');
  };
  upstream.once('error', failed);
  upstream.once('open', () => {
    upstream.off('error', failed); // the relay listens from here on
    upstream.pause(); // nothing is relayed before the engine opened the client side (WebSocketRelay.attach)
    const relay = new WebSocketRelay(upstream, settings, release);
    call?.end(101);
    answered(101);
    if (!life.upgrade(relay, upstream.protocol)) {
      upstream.terminate();
      release();
    }
    life.finish();
  });
  upstream.once('unexpected-response', (_req, res: IncomingMessage) => {
    upstream.off('error', failed);
    upstream.on('error', () => undefined); // terminate() below reports the aborted handshake: already answered
    call?.end(res.statusCode ?? 502);
    answered(res.statusCode ?? 502);
    refusedByUpstream(life, res, () => {
      upstream.terminate();
      release();
    });
  });
}

/** The upstream answered the handshake with something else than 101: the client gets that status and (the start of) its body. */
function refusedByUpstream(life: RequestOwner, res: IncomingMessage, cut: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const reply = () => {
    const type = res.headers['content-type'];
    if (life.answerable) life.reply(res.statusCode ?? 502, Buffer.concat(chunks), type ? [['content-type', type]] : []);
    else life.finish();
    cut();
  };
  res.on('data', (c: Buffer) => {
    if (size >= REFUSAL_BODY_BYTES) return;
    chunks.push(c.subarray(0, REFUSAL_BODY_BYTES - size));
    size += c.length;
  });
  res.once('end', reply);
  res.once('error', reply);
}

function subprotocols(header: string | undefined): string[] {
  return header ? header.split(',').map((p) => p.trim()).filter((p) => p !== '') : [];
}

/** The proxied request's headers as `ws` takes them, less the client's own handshake fields: `ws` writes its own. */
function handshakeHeaders(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const k = flat[i]!;
    if (k.startsWith('sec-websocket-')) continue;
    out[k] = out[k] === undefined ? flat[i + 1]! : `${out[k]}, ${flat[i + 1]!}`;
  }
  return out;
}
