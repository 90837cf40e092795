// gRPC calls made by hand, so no client library adds a deadline or a retry of its own: what
// the gateway answers is all there is. Over HTTP/2 (node's client, the TLS listener's ALPN
// h2) or as gRPC-Web over HTTP/1.1 (fetch, the plain port). Both give one shape:
// {status, data (the message frames), headStatus, trailerStatus, ms, cancelledAt?}.
import { connect, constants } from 'node:http2';

const CALL_MS = 5_000;

/** An h2 session to the TLS listener; rejects unless ALPN chose h2. */
export function h2Session(port, host) {
  return new Promise((resolve, reject) => {
    const session = connect(`https://127.0.0.1:${port}`, { servername: host, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] });
    const timer = setTimeout(() => (session.destroy(), reject(new Error(`no TLS session within ${CALL_MS} ms`))), CALL_MS);
    session.once('error', (err) => (clearTimeout(timer), reject(err)));
    session.once('connect', () => {
      clearTimeout(timer);
      if (session.alpnProtocol === 'h2') return resolve(session);
      session.destroy();
      reject(new Error(`ALPN chose ${session.alpnProtocol}, not h2`));
    });
  });
}

/** A call on `session`; `cancelAfterMs`: the client resets the stream (RST_STREAM CANCEL) then. */
export function h2Call(session, host, path, { headers = {}, body, cancelAfterMs } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const req = session.request({ ':method': 'POST', ':path': path, ':authority': host, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    const out = { status: 0, data: [], headStatus: undefined, trailerStatus: undefined };
    let cancelledAt;
    const late = setTimeout(() => (req.close(constants.NGHTTP2_CANCEL), reject(new Error(`${path}: no end within ${CALL_MS} ms`))), CALL_MS);
    const cancel = cancelAfterMs === undefined ? null : setTimeout(() => ((cancelledAt = Date.now()), req.close(constants.NGHTTP2_CANCEL)), cancelAfterMs);
    req.on('response', (h) => ((out.status = h[':status']), (out.headStatus = h['grpc-status'])));
    req.on('data', (d) => out.data.push(d));
    req.on('trailers', (t) => (out.trailerStatus = t['grpc-status']));
    req.on('error', (err) => (cancelledAt === undefined ? reject(err) : undefined));
    req.on('close', () => {
      clearTimeout(late);
      clearTimeout(cancel);
      resolve({ ...out, data: Buffer.concat(out.data), ms: Date.now() - started, cancelledAt, rstCode: req.rstCode });
    });
    req.end(body);
  });
}

/** A binary gRPC-Web call; `cancelAfterMs`: the client aborts it (fetch closes its connection). */
export async function webCall(origin, path, { headers = {}, body, cancelAfterMs } = {}) {
  const started = Date.now();
  const abort = new AbortController();
  let cancelledAt;
  const late = setTimeout(() => abort.abort(new Error(`${path}: no end within ${CALL_MS} ms`)), CALL_MS);
  const cancel = cancelAfterMs === undefined ? null : setTimeout(() => ((cancelledAt = Date.now()), abort.abort(new Error('cancelled'))), cancelAfterMs);
  try {
    const res = await fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', ...headers },
      body,
      signal: abort.signal,
    });
    const wire = Buffer.from(await res.arrayBuffer());
    return { status: res.status, ...webFrames(wire), headStatus: res.headers.get('grpc-status') ?? undefined, ms: Date.now() - started };
  } catch (err) {
    if (cancelledAt === undefined) throw err;
    return { status: 0, data: Buffer.alloc(0), ms: Date.now() - started, cancelledAt };
  } finally {
    clearTimeout(late);
    clearTimeout(cancel);
  }
}

/** A gRPC-Web body: its message frames as they are, and the trailer frame's (flag 0x80) grpc-status. */
function webFrames(wire) {
  const data = [];
  let trailerStatus;
  for (let at = 0; at + 5 <= wire.length; ) {
    const end = at + 5 + wire.readUInt32BE(at + 1);
    if (wire[at] & 0x80) trailerStatus = /^grpc-status:\s*(\d+)\r?$/im.exec(wire.subarray(at + 5, end).toString('latin1'))?.[1];
    else data.push(wire.subarray(at, end));
    at = end;
  }
  return { data: Buffer.concat(data), trailerStatus };
}
