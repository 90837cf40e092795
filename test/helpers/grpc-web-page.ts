import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { build } from 'esbuild';
import { ROOT } from './gateway.js';
import { echoProtoJson } from './grpc-web-wire.js';

/**
 * A page that calls the Echo service with the real `grpc-web` package (GrpcWebClientBase,
 * MethodDescriptor, protobufjs serialisers), bundled by esbuild and served by a tiny
 * node:http server of its own: its origin differs from the gateway's, so the calls are
 * cross-origin (CORS preflights, exposed headers) as a web app's would be.
 *
 * `window.echoCalls(base, format)` makes, against `base` (the gateway's URL): a unary call
 * with metadata, a server stream of 20 messages, and two failing unary calls (`fail:5`
 * trailers-only, and after the head so the status comes in the trailer frame). It returns
 * what the page saw, payloads as arrays of numbers.
 */
const PAGE_SCRIPT = `
import { GrpcWebClientBase, MethodDescriptor } from 'grpc-web';
import protobuf from 'protobufjs';
const root = protobuf.Root.fromJSON(ECHO_JSON);
const type = (name) => root.lookupType('switchyard.test.' + name);
const [EchoRequest, EchoReply, StreamRequest] = ['EchoRequest', 'EchoReply', 'StreamRequest'].map(type);
const serialize = (t) => (o) => t.encode(t.fromObject(o)).finish();
const deserialize = (bytes) => EchoReply.toObject(EchoReply.decode(bytes), { defaults: true, bytes: Array });
const method = (name, kind, req) => new MethodDescriptor('/switchyard.test.Echo/' + name, kind, Object, Object, serialize(req), deserialize);
const unary = method('Unary', 'unary', EchoRequest);
const stream = method('ServerStream', 'server_streaming', StreamRequest);

async function failing(client, url, metadata) {
  try {
    await client.unaryCall(url, { message: 'fail:5' }, metadata, unary);
    return { code: 0 };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

window.echoCalls = async (base, format) => {
  const client = new GrpcWebClientBase({ format });
  const url = base + '/switchyard.test.Echo/';
  const r = await client.unaryCall(url + 'Unary', { message: 'from the page', payload: [0, 1, 2, 250, 255] }, { 'x-team': 'web' }, unary);
  const streamed = await new Promise((resolve) => {
    const replies = [];
    let status = null;
    const s = client.serverStreaming(url + 'ServerStream', { count: 20, size: 40, intervalMs: 5 }, {}, stream);
    s.on('data', (m) => replies.push({ index: m.index, payload: m.payload }));
    s.on('status', (st) => { status = { code: st.code, details: st.details }; });
    s.on('error', (e) => resolve({ replies, status, error: { code: e.code, message: e.message } }));
    s.on('end', () => resolve({ replies, status, error: null }));
  });
  return {
    unary: { message: r.message, payload: r.payload, metadata: r.metadata },
    stream: streamed,
    failTrailersOnly: await failing(client, url + 'Unary', {}),
    failInTrailers: await failing(client, url + 'Unary', { 'x-echo-headers-first': '1' }),
  };
};
`;

export interface PageResults {
  unary: { message: string; payload: number[]; metadata: string };
  stream: { replies: { index: number; payload: number[] }[]; status: { code: number; details: string } | null; error: { code: number; message: string } | null };
  failTrailersOnly: { code: number; message?: string };
  failInTrailers: { code: number; message?: string };
}

/** Bundles the page script; serves `/` and `/bundle.js` on 127.0.0.1 (port chosen by the kernel); closed after the test. */
export async function startGrpcWebPage(t: Pick<TestContext, 'after'>): Promise<{ origin: string }> {
  const out = await build({
    stdin: { contents: `const ECHO_JSON = ${JSON.stringify(echoProtoJson())};\n${PAGE_SCRIPT}`, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    logLevel: 'silent',
  });
  const bundle = out.outputFiles[0]!.contents;
  const server = createServer((req, res) => {
    if (req.url === '/bundle.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return void res.end(bundle);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><script src="/bundle.js"></script></head><body>gRPC-Web page</body></html>');
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
