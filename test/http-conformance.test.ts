import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { ROOT_KEY, apply } from './helpers/admin.js';
import { startTap, type Tap } from './helpers/conformance-runner.js';
import { FRAMING_CASES } from './helpers/conformance-cases.js';
import { HEADER_CASES, LINE_CASES, PIPELINE_CASES, SIZE_CASES } from './helpers/conformance-cases-head.js';
import { expand, label, observe, problems, refused, smuggled, type Run, type Seen } from './helpers/conformance-judge.js';
import { startNginxProxy } from './helpers/nginx-proxy.js';
import { NODE_EXCEPTIONS, NODE_EXPECT } from './helpers/conformance-node.js';
import { uwsSupport } from '../src/shared/uws-support.js';

/**
 * HTTP/1.1 conformance and request smuggling on the data port, over raw sockets: every
 * case from the tables is sent on a fresh connection to the gateway and to nginx, each
 * proxying to a recording upstream (through a tap that keeps the bytes it got).
 * The gateway must meet each case's expectation, and be at least as strict as nginx.
 * The two engines run side by side, each in three lanes (the quick cases, and two halves of
 * those that wait out a timeout), and each case goes to the gateway and to nginx at once:
 * every side of every lane has its own upstream, so what reached it is its own; the wait
 * is mostly settle windows and timeouts, not CPU.
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
/** Per engine: the quick cases, and two halves of those that wait out a timeout. */
const LANES = 3;

/** A gateway and an nginx, each in front of a recording upstream of its own through a tap. */
interface Lane {
  gw: Gateway;
  up: Upstream;
  gwTap: Tap;
  nginxPort: number | null;
  ngUp: Upstream;
  ngTap: Tap;
}

async function openLane(t: TestContext, engine: 'uws' | 'node'): Promise<Lane> {
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
  return { gw, up, gwTap, nginxPort: await startNginxProxy(t, ngTap.port), ngUp, ngTap };
}

/** Sends `runs` through the lane one after another, each to the gateway and to nginx at once; what each side saw goes into `seen`. */
async function sendThrough(l: Lane, runs: Run[], patient: (run: Run) => boolean, seen: Map<Run, { g: Seen; n: Seen | null }>): Promise<void> {
  for (const run of runs) {
    const [first, n] = await Promise.all([
      observe(l.gw.dataPort, l.gwTap, l.up, run, patient(run)),
      l.nginxPort === null ? null : observe(l.nginxPort, l.ngTap, l.ngUp, run, patient(run)),
    ]);
    let g: Seen = first;
    // A late first byte is measured again once: waiting for a timeout is seconds, a busy machine milliseconds.
    if (!patient(run) && (g.ms === null || g.ms > 100)) g = await observe(l.gw.dataPort, l.gwTap, l.up, run, false);
    seen.set(run, { g, n });
  }
}

describe('HTTP/1.1 conformance on the data port', { concurrency: true }, () => {
  // Every lane of both engines is opened before any exchange starts: a gateway binding its
  // ports while other lanes open hundreds of connections could find a port taken meanwhile.
  const cleanups: (() => unknown)[] = [];
  const owner = { after: (fn: () => unknown) => void cleanups.push(fn) } as unknown as TestContext;
  const lanes = new Map<string, Lane[]>();
  before(async () => {
    for (const engine of ENGINES) {
      const opened: Lane[] = [];
      for (let i = 0; i < LANES; i++) opened.push(await openLane(owner, engine));
      lanes.set(engine, opened);
    }
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  for (const engine of ENGINES) {
    const RUNS = expand(engine === 'uws' ? CASES : CASES.map((c) => (c.name in NODE_EXPECT ? { ...c, expect: NODE_EXPECT[c.name]! } : c)));
    const EXCEPTIONS = engine === 'uws' ? UWS_EXCEPTIONS : NODE_EXCEPTIONS;
    it(`${engine} engine: HTTP/1.1 conformance: malformed and ambiguous requests are refused at once, never forwarded, and at least as strictly as nginx`, { timeout: 600_000 }, async (t) => {
      const patient = (run: Run) => run.case.name in EXCEPTIONS || Boolean(run.case.incomplete);
      // The runs that wait out a timeout (seconds each) go in two lanes of their own beside
      // the quick ones: each lane has its own gateway, nginx, upstreams and taps.
      // A case's runs stay together, in their order: a framing case, then it with /smuggled behind.
      const slowCases = [...new Set(RUNS.filter(patient).map((r) => r.case))];
      const half = (k: number) => RUNS.filter((r) => patient(r) && slowCases.indexOf(r.case) % 2 === k);
      const split = [RUNS.filter((r) => !patient(r)), half(0), half(1)];
      const seen = new Map<Run, { g: Seen; n: Seen | null }>();
      const opened = lanes.get(engine)!;
      await Promise.all(split.map((runs, i) => sendThrough(opened[i]!, runs, patient, seen)));
      const nginxPort = opened[0]!.nginxPort;
      if (nginxPort === null) t.diagnostic('nginx is not installed (/usr/sbin/nginx): the nginx comparison is skipped');

      const failures: string[] = [];
      const rows: string[] = [];
      /** The strict score (as Http11Probe counts it): exchanges each side refused. */
      const strict = { gateway: 0, nginx: 0 };
      for (const run of RUNS) {
        const excepted = run.case.name in EXCEPTIONS;
        const { g, n } = seen.get(run)!;
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
