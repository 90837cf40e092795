import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { rawRequest } from './helpers/raw-http.js';
import { BOUNDED, sleep } from './helpers/wait.js';

/** An upstream on a raw socket: `answer` writes whatever bytes a test needs once a request head arrived. */
async function rawUpstream(t: { after(fn: () => unknown): void }, answer: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    let head = '';
    socket.on('data', (d) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        head = '';
        answer(socket);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Sends a request in pieces (a number: pause that many ms) on one connection and resolves
 * with everything the gateway wrote back once it closes (the request says Connection: close).
 * Never half-closes: uWS closes a half-closed connection at once.
 */
async function slowRequest(port: number, pieces: (string | number)[]): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
  await new Promise((r) => socket.once('connect', r));
  for (const p of pieces) {
    if (typeof p === 'number') await sleep(p);
    else socket.write(p);
  }
  await new Promise((r) => socket.once('close', r));
  return answer;
}

test('an upstream answer in a transfer coding undici does not undo, or with framing llhttp refuses, is 502 Svc.Data.UpstreamInvalid', BOUNDED, async (t) => {
  // Regression: `Transfer-Encoding: gzip, chunked` reached the client as a complete 200
  // whose body was gzip bytes labelled as nothing (the hop-by-hop header was dropped).
  const gz = gzipSync('{"hello":"world"}');
  const coded = await rawUpstream(t, (s) => {
    s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${gz.length.toString(16)}\r\n`);
    s.write(gz);
    s.write('\r\n0\r\n\r\n');
  });
  const smuggly = await rawUpstream(t, (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'));
  // Regression: llhttp's own refusals (undici's HTTPParserError, whose code undici 7.30
  // leaves undefined) were reported as Svc.Data.UpstreamUnreachable.
  const folded = await rawUpstream(t, (s) => s.write('HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length: 2\r\n\r\nok'));
  const badChunk = await rawUpstream(t, (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'coded', { targets: [coded] }],
    ['cluster', 'smuggly', { targets: [smuggly] }],
    ['cluster', 'folded', { targets: [folded] }],
    ['cluster', 'bad-chunk', { targets: [badChunk] }],
    ['route', 'coded', { cluster: 'coded', pathPrefix: '/coded' }],
    ['route', 'smuggly', { cluster: 'smuggly', pathPrefix: '/smuggly' }],
    ['route', 'folded', { cluster: 'folded', pathPrefix: '/folded' }],
    ['route', 'bad-chunk', { cluster: 'bad-chunk', pathPrefix: '/bad-chunk' }],
  ]);
  for (const path of ['/coded', '/smuggly', '/folded', '/bad-chunk']) {
    const r = await rawRequest(gw.dataPort, [`GET ${path} HTTP/1.1`, 'Host: a', 'Connection: close']);
    assert.equal(r.status, 502, `${path}: ${r.raw.slice(0, 300)}`);
    assert.equal(r.json.code, 'Svc.Data.UpstreamInvalid', `${path}: ${r.text}`);
  }
});

test('a short headers deadline runs from the end of the upload: a slow client is not the upstream’s timeout', BOUNDED, async (t) => {
  // Regression: the precise headers timer started at dispatch, so a client taking 1.4 s
  // to send 30 bytes got 504 from a route with headersMs 1000 although the upstream
  // answered as soon as the body ended (undici's own timer starts once the request is sent).
  const up = await startUpstream(t);
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'api', { targets: [up.target], timeouts: { headersMs: 1000 } }],
    ['route', 'api', { cluster: 'api' }],
  ]);
  const answer = await slowRequest(gw.dataPort, ['POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\nConnection: close\r\n\r\n0123456789', 700, '0123456789', 700, '0123456789']);
  assert.match(answer, /^HTTP\/1\.1 200 /, answer.slice(0, 300));
  assert.match(answer, /"bodyBytes":30/);

  // And the deadline still holds once the request is sent.
  const slow = await rawRequest(gw.dataPort, ['GET /slow HTTP/1.1', 'Host: a', 'Connection: close', 'X-Up-Delay-Ms: 3000']);
  assert.equal(slow.status, 504);
});

test('a short headers deadline ends when the head arrives, also while the upload is still going', BOUNDED, async (t) => {
  // Regression: an upstream that answered before reading the whole upload had its head
  // relayed, then the timer armed at the upload's end cut the streaming response.
  const upstream = createServer((socket) => {
    let got = '';
    let answered = false;
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (!answered && got.includes('\r\n\r\n')) {
        answered = true;
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst;\r\n');
      }
      if (got.endsWith('0123456789abcdefghij')) setTimeout(() => socket.end('4\r\nlast\r\n0\r\n\r\n'), 1_200);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => upstream.close(r)));
  const gw = await startGateway(t, { keys: [ROOT_KEY] });
  await apply(gw, [
    ['cluster', 'early', { targets: [`127.0.0.1:${(upstream.address() as AddressInfo).port}`], timeouts: { headersMs: 500 } }],
    ['route', 'early', { cluster: 'early' }],
  ]);
  const answer = await slowRequest(gw.dataPort, ['POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 20\r\nConnection: close\r\n\r\n0123456789', 300, 'abcdefghij']);
  assert.match(answer, /first;[\s\S]*last[\s\S]*\r\n0\r\n\r\n$/, answer);
});
