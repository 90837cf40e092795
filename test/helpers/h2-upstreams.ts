import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { Upstream } from './upstream.js';

/** One line of a trickled answer (fixed length, so a test knows the whole answer's size). */
const TRICKLE_LINE = `${'t'.repeat(63)}\n`;

/** The bytes of a trickled answer of `chunks` lines. */
export const trickleBytes = (chunks: number): number => chunks * TRICKLE_LINE.length;

/**
 * Answers for the HTTP/2 tests on the default test upstream (others keep its default):
 *  - `/…/hop`: an answer whose head has connection-specific lines (Connection naming an
 *    end-to-end line, Keep-Alive, Transfer-Encoding, Proxy-Connection, Upgrade) and an
 *    upper-case end-to-end name, which HTTP/2 must not carry or must lower-case;
 *  - `/…/trickle?n=<lines>&ms=<gap>`: `n` lines of 64 bytes, one every `ms`, chunked.
 */
export function serveH2Specials(up: Upstream): void {
  up.handler = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.endsWith('/hop')) {
      res.writeHead(200, [
        'Connection', 'keep-alive, X-Hop',
        'Keep-Alive', 'timeout=5',
        'Transfer-Encoding', 'chunked',
        'Proxy-Connection', 'keep-alive',
        'Upgrade', 'foo/1',
        'X-Upper-Case', 'Yes',
        'Content-Type', 'text/plain',
      ]);
      res.end('hop body');
      return true;
    }
    if (url.pathname.endsWith('/trickle')) {
      const lines = Number(url.searchParams.get('n') ?? 10);
      const gapMs = Number(url.searchParams.get('ms') ?? 100);
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return void clearInterval(timer);
        res.write(TRICKLE_LINE);
        if (++sent === lines) {
          clearInterval(timer);
          res.end();
        }
      }, gapMs);
      return true;
    }
    return false;
  };
}

/** An upstream that answers every request 200 with its body, streamed back as it arrives. */
export async function startEchoUpstream(t: Pick<TestContext, 'after'>): Promise<{ target: string }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' });
    req.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { target: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}
