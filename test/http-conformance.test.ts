import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './helpers/gateway.js';
import { startUpstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { startTap } from './helpers/conformance-runner.js';
import { FRAMING_CASES } from './helpers/conformance-cases.js';
import { HEADER_CASES, LINE_CASES, PIPELINE_CASES, SIZE_CASES } from './helpers/conformance-cases-head.js';
import { expand, label, observe, problems, refused, smuggled, type Seen } from './helpers/conformance-judge.js';
import { startNginxProxy } from './helpers/nginx-proxy.js';
import { NODE_EXCEPTIONS, NODE_EXPECT } from './helpers/conformance-node.js';
import { uwsSupport } from '../src/shared/uws-support.js';

/**
 * HTTP/1.1 conformance and request smuggling on the data port, over raw sockets: every
 * case from the tables is sent on a fresh connection to the gateway and to nginx, both
 * proxying to one recording upstream (each through a tap that keeps the bytes it got).
 * The gateway must meet each case's expectation, and be at least as strict as nginx.
 * The two engines run side by side, and each case goes to the gateway and to nginx at
 * once: each side has its own upstream, so what reached it is its own; the wait is mostly
 * settle windows and timeouts, not CPU.
 */

/**
 * Where the gateway is less strict than nginx or slower than 100 ms, on purpose or because
 * uWS's parser decides before the gateway sees the request; each case's expectation pins
 * what it does now. The same list is in docs/reference.md, "HTTP conformance".
 */
const UWS_EXCEPTIONS: Record<string, string> = {
  'te: tab before value': 'HTAB is optional whitespace before a field value (RFC 9110 §5.6.3); nginx 1.22 answers 501',
  'field: empty name': 'uWS drops a field line with an empty name; the request is served without it',
  'chunk: size led by space': 'uWS reads ` 5` as the last chunk: the request goes upstream with an empty body, what follows is answered 400',
  'chunk: no CRLF after data': 'uWS skips the two bytes after chunk data unchecked; the body is the size announced',
  'chunk: data longer than size': 'uWS skips the two bytes after chunk data unchecked; the body is the size announced',
  'chunk: extension 5;a=b': 'uWS reads every byte after a chunk extension as body: the body never ends, 408 after bodyMs',
  'chunk: extension with lone CR': 'as any chunk extension: 408 after bodyMs',
  'chunk: extension ended by LF': 'as any chunk extension: 408 after bodyMs',
  'chunk: extension, then 70 KB holding a request': 'as any chunk extension: past requestBuffering.maxBytes the following bytes, a request included, stream upstream as body',
  'field: lone CR in value': 'uWS never answers; it closes after its idle timeout (about 30 s); nothing is forwarded',
  'line: leading empty line': 'uWS never answers; it closes after its idle timeout (about 30 s); nothing is forwarded',
};

const CASES = [...FRAMING_CASES, ...HEADER_CASES, ...LINE_CASES, ...SIZE_CASES, ...PIPELINE_CASES];
const ENGINES: ('uws' | 'node')[] = uwsSupport().ok ? ['uws', 'node'] : ['node'];

describe('HTTP/1.1 conformance on the data port', { concurrency: true }, () => {
  for (const engine of ENGINES) {
    const RUNS = expand(engine === 'uws' ? CASES : CASES.map((c) => (c.name in NODE_EXPECT ? { ...c, expect: NODE_EXPECT[c.name]! } : c)));
    const EXCEPTIONS = engine === 'uws' ? UWS_EXCEPTIONS : NODE_EXCEPTIONS;
    it(`${engine} engine: HTTP/1.1 conformance: malformed and ambiguous requests are refused at once, never forwarded, and at least as strictly as nginx`, { timeout: 600_000 }, async (t) => {
      const up = await startUpstream(t);
      const ngUp = await startUpstream(t);
      const gwTap = await startTap(t, up.port);
      const ngTap = await startTap(t, ngUp.port);
      const gw = await startGateway(t, { keys: [ROOT_KEY], engine });
      await apply(gw, [
        // A short body timeout: a body that never ends is answered 408 within a second or two.
        ['cluster', 'c', { targets: [`127.0.0.1:${gwTap.port}`], timeouts: { bodyMs: 1_000 } }],
        ['route', 'all', { cluster: 'c' }],
      ]);
      const nginxPort = await startNginxProxy(t, ngTap.port);
      if (nginxPort === null) t.diagnostic('nginx is not installed (/usr/sbin/nginx): the nginx comparison is skipped');

      const failures: string[] = [];
      const rows: string[] = [];
      /** The strict score (as Http11Probe counts it): exchanges each side refused. */
      const strict = { gateway: 0, nginx: 0 };
      for (const run of RUNS) {
        const excepted = run.case.name in EXCEPTIONS;
        const patient = excepted || Boolean(run.case.incomplete);
        const [first, n] = await Promise.all([
          observe(gw.dataPort, gwTap, up, run, patient),
          nginxPort === null ? null : observe(nginxPort, ngTap, ngUp, run, patient),
        ]);
        let g: Seen = first;
        // A late first byte is measured again once: waiting for a timeout is seconds, a busy machine milliseconds.
        if (!patient && (g.ms === null || g.ms > 100)) g = await observe(gw.dataPort, gwTap, up, run, patient);
        for (const p of problems(run, g, excepted)) failures.push(`${run.name}: ${p}`);
        // nginx's own limits (a 1 MiB body) and timeouts are policy, not parsing: incomplete cases are not compared.
        if (n && !excepted && !run.case.incomplete) {
          if (refused(n) && !refused(g)) failures.push(`${run.name}: nginx refuses (${label(n)}), the gateway does not (${label(g)})`);
          if (smuggled(n) === 0 && smuggled(g) > 0) failures.push(`${run.name}: /smuggled reached the upstream through the gateway, not through nginx`);
        }
        if (n) {
          strict.gateway += refused(g) ? 1 : 0;
          strict.nginx += refused(n) ? 1 : 0;
        }
        rows.push(`${run.name.padEnd(50)} | ${`${label(g)} ${g.ms ?? '-'}ms`.padEnd(32)} | ${n ? label(n) : 'skipped'}${excepted ? ' | exception' : ''}`);
      }
      t.diagnostic(`${RUNS.length} exchanges over ${new Set(RUNS.map((r) => r.case)).size} cases; gateway and nginx side by side:`);
      t.diagnostic(`${'case'.padEnd(50)} | ${'gateway'.padEnd(32)} | nginx`);
      for (const row of rows) t.diagnostic(row);
      for (const [name, why] of Object.entries(EXCEPTIONS)) t.diagnostic(`exception: ${name}: ${why}`);
      const unknown = Object.keys(EXCEPTIONS).filter((k) => !RUNS.some((r) => r.case.name === k));
      assert.deepEqual(unknown, [], 'every exception names a case');
      if (nginxPort !== null) {
        t.diagnostic(`strict score: the gateway refused ${strict.gateway} of ${RUNS.length} exchanges, nginx ${strict.nginx}`);
        assert.ok(strict.gateway >= strict.nginx, `strict score ${strict.gateway} below nginx's ${strict.nginx}`);
      }
      assert.deepEqual(failures, []);
    });
  }
});
