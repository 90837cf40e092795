// What run.mjs checks of every target before loading it: the answer a load generator will
// count must be the right one (a proxy answering 502 fast would otherwise read as fast).
// HTTP and HTTPS targets must answer 200 with the expected body; WebSocket targets must
// echo one text message as sent; HTTP/2 targets must answer 200 with the body over h2; gRPC
// targets must answer a call 200 with grpc-status 0 in the trailers and the expected replies.
import { connect } from 'node:http2';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import { BENCH_TLS_NAME } from './tls-cert.mjs';
import { UNARY_REPLY, UNARY_REQUEST, grpcCall } from './grpc-wire.mjs';

const CHECK_TIMEOUT_MS = 5_000;

// The bench's certificate is self-signed (wrk does not verify either); the name is sent as
// SNI because undici sends none for an IP address, and the gateway refuses a handshake without.
const TLS_CHECK = new Agent({ connect: { rejectUnauthorized: false, servername: BENCH_TLS_NAME } });

/** `url` answers 200 with a body containing `expected`, else this throws. */
export async function expectBody(name, url, expected, headers = {}) {
  const res = await request(url, {
    headers,
    headersTimeout: CHECK_TIMEOUT_MS,
    bodyTimeout: CHECK_TIMEOUT_MS,
    ...(url.startsWith('https:') ? { dispatcher: TLS_CHECK } : {}),
  });
  const body = await res.body.text();
  if (res.statusCode !== 200 || !body.includes(expected)) {
    throw new Error(`${name}: ${url} answered ${res.statusCode} ${body.slice(0, 200)}; expected 200 with ${expected}`);
  }
}

/** One text message through a WebSocket at `url` comes back as sent within 5 s, else this rejects. */
export function expectEcho(name, url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      reject(new Error(`${name}: ${url} ${why}`));
    };
    const timer = setTimeout(() => fail(`gave no echo within ${CHECK_TIMEOUT_MS / 1000} s`), CHECK_TIMEOUT_MS);
    ws.once('unexpected-response', (_req, res) => fail(`refused the handshake with ${res.statusCode}`));
    ws.on('error', (err) => fail(err.message));
    ws.once('open', () => ws.send('sanity'));
    ws.once('message', (data, isBinary) => {
      if (isBinary || data.toString() !== 'sanity') return fail(`echoed ${JSON.stringify(data.toString().slice(0, 100))}`);
      settled = true;
      clearTimeout(timer);
      ws.close(1000);
      resolve();
    });
  });
}

/** `url` (https) answers one HTTP/2 request, negotiated by ALPN as h2load does (no SNI for an IP), 200 with `expected`, else this rejects. */
export function expectH2Body(name, url, expected, headers = {}) {
  return new Promise((resolve, reject) => {
    const session = connect(url, { rejectUnauthorized: false, ALPNProtocols: ['h2'] });
    const timer = setTimeout(() => fail(`gave no answer within ${CHECK_TIMEOUT_MS / 1000} s`), CHECK_TIMEOUT_MS);
    function fail(why) {
      clearTimeout(timer);
      session.destroy();
      reject(new Error(`${name}: ${url} over h2 ${why}`));
    }
    session.once('error', (err) => fail(err.message));
    const stream = session.request({ ':path': new URL(url).pathname, ...headers });
    let status = 0;
    let body = '';
    stream.once('response', (h) => (status = h[':status']));
    stream.setEncoding('utf8').on('data', (d) => (body += d));
    stream.once('error', (err) => fail(err.message));
    stream.once('end', () => {
      if (status !== 200 || !body.includes(expected)) return fail(`answered ${status} ${body.slice(0, 200)}; expected 200 with ${expected}`);
      clearTimeout(timer);
      session.close();
      resolve();
    });
  });
}

/**
 * One call of `method` ('Unary', or 'Stream' asking for `count` replies of `size` bytes) at the
 * origin of `url` (http: h2c) answers 200 with the expected replies and grpc-status 0 in the
 * trailers (a relay that dropped them would fail every real client), else this rejects.
 */
export async function expectGrpc(name, url, method, { count = 0, size = 0 } = {}) {
  const request = method === 'Unary' ? UNARY_REQUEST : { count, size };
  const r = await grpcCall(new URL(url).origin, method, request, { timeoutMs: CHECK_TIMEOUT_MS }).catch((err) => {
    throw new Error(`${name}: ${url} ${err.message}`);
  });
  const ok =
    method === 'Unary'
      ? r.replies.length === 1 && r.replies[0].message === UNARY_REPLY.message
      : r.replies.length === count && r.replies.every((m) => m.payload.length === size);
  if (r.status !== 200 || r.grpcStatus !== 0 || !r.inTrailers || !ok) {
    const where = r.grpcStatus === null ? '' : r.inTrailers ? ' in the trailers' : ' in the head';
    throw new Error(`${name}: ${url} answered ${r.status}, grpc-status ${r.grpcStatus}${where}${r.grpcMessage ? ` (${decodeURIComponent(r.grpcMessage)})` : ''}, ${r.replies.length} replies; expected 200, the replies asked for and grpc-status 0 in the trailers`);
  }
}
