import type { TestContext } from 'node:test';
import { startNginx } from './nginx.js';
import { sendRaw } from './conformance-runner.js';

/**
 * nginx as a plain reverse proxy in front of `upstreamPort` (HTTP/1.1 to the upstream,
 * keep-alive, its default limits otherwise), run in the foreground as a child of the test
 * with its config, pid and error log in a temp dir, and killed by its PID after the test.
 * Resolves with its port, or null when nginx is not installed.
 */
export async function startNginxProxy(t: TestContext, upstreamPort: number): Promise<number | null> {
  const nginx = await startNginx(
    t,
    `client_header_timeout 2s;\n  client_body_timeout 2s;\n  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 4; }`,
    'location / {\n      proxy_pass http://up;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n    }',
  );
  if (!nginx) return null;
  // Ready when it answers on its port (a request the upstream also sees, before any case runs).
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failed = nginx.failure();
    if (failed) throw new Error(failed);
    const r = await sendRaw(nginx.port, ['GET /ready HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n'], { want: 1, settleMs: 0, timeoutMs: 1_000 });
    if (r.statuses.length) return nginx.port;
    if (Date.now() > deadline) throw new Error(`nginx did not answer within 10 s: ${nginx.describe()}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}
