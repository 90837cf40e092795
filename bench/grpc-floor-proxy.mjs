// A bare h2c -> h2c proxy on node:http2's raw stream API, one upstream session: the floor
// of any Node.js gRPC proxy, for the gRPC unary ratio's context (bench/README.md, "gRPC
// floor"). Not a target of run.mjs: run by hand, `node bench/grpc-floor-proxy.mjs <port> <upstream host:port>`.
import http2 from 'node:http2';

const [port, target] = process.argv.slice(2);
const up = http2.connect(`http://${target}`);
up.on('error', (err) => {
  console.error(err.message);
  process.exit(1);
});
const server = http2.createServer();
server.on('stream', (s, h) => {
  const out = up.request({ ':method': h[':method'], ':path': h[':path'], 'content-type': h['content-type'], te: 'trailers' });
  let trailers = { 'grpc-status': '2' };
  out.on('response', (rh) => !s.destroyed && s.respond({ ':status': rh[':status'], 'content-type': rh['content-type'] }, { waitForTrailers: true }));
  out.on('trailers', (t) => (trailers = { 'grpc-status': t['grpc-status'] ?? '2' }));
  s.on('wantTrailers', () => !s.destroyed && s.sendTrailers(trailers));
  s.pipe(out);
  out.pipe(s);
  out.on('error', () => s.destroy());
  s.on('error', () => out.destroy());
});
server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
