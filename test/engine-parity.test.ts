import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { ROOT_KEY, apply, type Kind } from './helpers/admin.js';
import { request } from './helpers/http.js';
import { rawRequest, type RawResponse } from './helpers/raw-http.js';
import { startUpstream } from './helpers/upstream.js';
import { SERVER, startOtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { freePort } from './helpers/ports.js';
import { BOUNDED, waitFor } from './helpers/wait.js';
import { accessLogLines } from './helpers/access-log-file.js';
import type { Json } from './helpers/json.js';
import { uwsSupport } from '../src/shared/uws-support.js';

/**
 * The engines' promise checked from outside: a `uws` and a `node` gateway with the same
 * worker.json (but `listen.engine`) and the same published routes, one upstream and one
 * OTLP receiver behind both, the same raw HTTP/1.1 requests to each; then, request by
 * request, the answer, the access-log line and the server span, and at the end the
 * metrics, must be the same. No row of docs/engines.md applies to these requests.
 */

type Engine = 'uws' | 'node';
const ENGINES: Engine[] = ['uws', 'node'];

/** What a value that legitimately varies is replaced with before comparing. */
const VARIES = '<varies>';

/** Response headers whose values legitimately differ between two runs (their names are still compared). */
const VARYING_HEADERS: Record<string, string> = {
  date: 'the time of the answer',
  'x-request-id': "the request id: a worker's random prefix and its counter",
};

/** JSON body fields, at any depth, whose values legitimately differ; a value of one is replaced wherever it appears. */
const VARYING_BODY_FIELDS: Record<string, string> = {
  traceId: "an error envelope's traceId is the request id",
  requestId: 'the request id',
  'x-request-id': "the upstream echo's copy of the request id",
  traceparent: "the upstream echo's copy of the W3C trace context: random trace and span ids",
  'x-forwarded-port': "the upstream echo's copy of the gateway's own data port, one per gateway",
  remotePort: "the upstream echo's view of the gateway's ephemeral source port",
};

/** Access-log fields whose values legitimately differ (only whether they are null is compared). */
const VARYING_LOG_FIELDS: Record<string, string> = {
  time: 'the arrival time',
  durationMs: 'a measured duration',
  upstreamMs: 'a measured duration',
  requestId: 'the request id, which the lines are matched by',
  traceId: 'a random trace id',
};

/** Server-span attributes whose values legitimately differ. */
const VARYING_SPAN_ATTRIBUTES: Record<string, string> = {
  'switchyard.request_id': 'the request id, which the spans are matched by',
};

/**
 * Response-head lines one engine writes and the other does not: docs/engines.md's row
 * "head lines the engine adds to every HTTP/1.1 answer", and nothing else. The comparisons
 * leave exactly these out; a test below fails when one no longer happens (the page would be wrong).
 */
const LISTED_HEAD_LINES: { engine: Engine; why: string; drop: (name: string, value: string) => boolean }[] = [
  {
    engine: 'uws',
    why: 'uWS marks every answer `uWebSockets: 20`',
    drop: (name) => name === 'uwebsockets',
  },
  {
    engine: 'node',
    why: 'node:http writes `Connection: keep-alive` and `Keep-Alive: timeout=30` on every answer it keeps the connection open after',
    drop: (name, value) => name === 'keep-alive' || (name === 'connection' && value.toLowerCase() === 'keep-alive'),
  },
];

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEY = 'parity-key';

interface Case {
  name: string;
  head: string[];
  body?: string;
  /** The status both engines must answer: the same wrong answer twice is no parity. */
  status: number;
  /** Whether a SERVER span is recorded (no trace for answers given before a cluster route takes the request). */
  traced: boolean;
  check?: (r: RawResponse) => void;
}

const get = (path: string, ...headers: string[]) => [`GET ${path} HTTP/1.1`, 'Host: parity.test', 'User-Agent: parity/1', ...headers];
const post = (path: string, body: string) => [`POST ${path} HTTP/1.1`, 'Host: parity.test', 'Content-Type: text/plain', `Content-Length: ${body.length}`];

const CASES: Case[] = [
  { name: 'a plain proxied request', head: get('/plain/items?page=2&token=s3cret', 'Referer: https://ref.test/'), status: 200, traced: true },
  { name: 'key-auth without a key', head: get('/key/x'), status: 401, traced: true, check: (r) => assert.equal(r.json?.code, 'Svc.Data.Unauthenticated') },
  { name: 'key-auth with a wrong key', head: get('/key/x', 'X-Api-Key: wrong'), status: 401, traced: true },
  { name: 'key-auth with the key', head: get('/key/x', `X-Api-Key: ${KEY}`), status: 200, traced: true, check: (r) => assert.equal(r.json?.headers['x-consumer-id'], 'app') },
  { name: 'rate-limit: the one request of the burst', head: get('/limited/1'), status: 200, traced: true },
  { name: 'rate-limit: the request after the limit', head: get('/limited/2'), status: 429, traced: true, check: (r) => assert.match(r.headers['retry-after'] ?? '', /^\d+$/) },
  {
    name: 'request and response header edits',
    head: get('/headers/x', 'X-Drop: gone', 'X-Add: first', 'X-Set: client', `X-Up-Headers: ${JSON.stringify({ 'x-up-secret': 's', 'x-served-by': 'upstream' })}`),
    status: 200,
    traced: true,
    check: (r) => {
      assert.deepEqual([r.json?.headers['x-set'], r.json?.headers['x-add'], r.json?.headers['x-drop']], ['gw', 'first, a', undefined]);
      assert.deepEqual([r.headers['x-served-by'], r.headers['x-extra'], r.headers['x-up-secret']], ['gw', '1', undefined]);
    },
  },
  {
    name: 'a CORS preflight',
    head: ['OPTIONS /cors/x HTTP/1.1', 'Host: parity.test', 'Origin: https://app.example', 'Access-Control-Request-Method: PUT', 'Access-Control-Request-Headers: x-custom'],
    status: 204,
    traced: true,
    check: (r) => assert.equal(r.headers['access-control-allow-origin'], 'https://app.example'),
  },
  { name: 'a CORS request from an allowed origin', head: get('/cors/x', 'Origin: https://app.example'), status: 200, traced: true },
  { name: 'ip-restriction refusing 127.0.0.1', head: get('/ipdeny/x'), status: 403, traced: true },
  {
    name: 'request-size-limit: a body over maxBytes',
    head: post('/size/x', 'x'.repeat(11)),
    body: 'x'.repeat(11),
    status: 413,
    traced: true,
    // The step asks for the close; the engine writes its one Connection line (uws wrote the step's and its own).
    check: (r) => assert.deepEqual(r.headerList.filter(([n]) => n === 'connection').map(([, v]) => v.toLowerCase()), ['close']),
  },
  { name: 'request-size-limit: a body within maxBytes', head: post('/size/x', 'x'.repeat(5)), body: 'x'.repeat(5), status: 200, traced: true },
  { name: 'a directResponse', head: get('/direct'), status: 418, traced: false, check: (r) => assert.equal(r.text, 'short and stout') },
  { name: 'a redirect', head: get('/moved/x'), status: 301, traced: false, check: (r) => assert.equal(r.headers.location, 'https://example.test/new?x=1') },
  { name: 'a cluster whose target refuses connections', head: get('/dead/x'), status: 502, traced: true, check: (r) => assert.equal(r.json?.code, 'Svc.Data.UpstreamUnreachable') },
  { name: 'no route', head: get('/nowhere'), status: 404, traced: false, check: (r) => assert.equal(r.json?.code, 'Svc.Data.NoRoute') },
  { name: 'a malformed path', head: get('/plain/%zz'), status: 400, traced: false, check: (r) => assert.equal(r.json?.code, 'Svc.Data.BadRequest') },
];

/** The one configuration published to both gateways; each route on its own prefix. */
function entities(upstream: string, deadPort: number): [Kind, string, unknown][] {
  const route = (name: string, prefix: string, steps: unknown[], cluster = 'up'): [Kind, string, unknown] => ['route', name, { cluster, pathPrefix: prefix, steps }];
  return [
    ['cluster', 'up', { targets: [upstream] }],
    ['cluster', 'dead', { targets: [`127.0.0.1:${deadPort}`] }],
    route('plain', '/plain', []),
    route('key', '/key', [{ code: 'key-auth', settings: { keys: [{ id: 'app', sha256: sha(KEY) }] } }]),
    // One token a thousand seconds: the second request is refused whatever the timing.
    route('limited', '/limited', [{ code: 'rate-limit', settings: { requestsPerSecond: 0.001, burst: 1 } }]),
    route('headers', '/headers', [
      { code: 'request-headers', settings: { set: { 'x-set': 'gw' }, add: { 'x-add': 'a' }, remove: ['x-drop'] } },
      { code: 'response-headers', settings: { set: { 'x-served-by': 'gw' }, add: { 'x-extra': '1' }, remove: ['x-up-secret'] } },
    ]),
    route('cors', '/cors', [{ code: 'cors', settings: { origins: ['https://app.example'], credentials: true } }]),
    route('ipdeny', '/ipdeny', [{ code: 'ip-restriction', settings: { deny: ['127.0.0.1'] } }]),
    route('size', '/size', [{ code: 'request-size-limit', settings: { maxBytes: 10 } }]),
    ['route', 'direct', { pathPrefix: '/direct', directResponse: { statusCode: 418, body: 'short and stout', headers: { 'X-Kettle': 'on' } } }],
    ['route', 'moved', { pathPrefix: '/moved', redirect: { location: 'https://example.test/new?x=1', statusCode: 301 } }],
    route('dead', '/dead', [], 'dead'),
  ];
}

/** The data plane's counters compared after the run, every series of each. */
const COMPARED_SERIES = [
  'switchyard_requests_total',
  'switchyard_step_rejections_total',
  'switchyard_bytes_received_total',
  'switchyard_bytes_sent_total',
  'switchyard_request_duration_seconds_count',
  'switchyard_upstream_errors_total',
];

/** What one request came to on one engine, with the values that legitimately vary replaced. */
interface Seen {
  status: number;
  headers: Record<string, string[]>;
  body: Json;
  log: Record<string, Json>;
  span: { name: string; statusCode: number; attributes: Record<string, Json> } | null;
}

/**
 * `v` with the values of VARYING_BODY_FIELDS replaced wherever they appear: the upstream
 * echo repeats its headers' values in `rawHeaders`, so a value is known by what it is too.
 */
function scrubJson(v: Json): Json {
  const varying = new Set<string>();
  const collect = (x: Json): void => {
    if (x === null || typeof x !== 'object') return;
    for (const [k, y] of Object.entries(x)) {
      if (k in VARYING_BODY_FIELDS && (typeof y === 'string' || typeof y === 'number')) varying.add(String(y));
      else collect(y);
    }
  };
  const replace = (x: Json, key?: string): Json => {
    if (key !== undefined && key in VARYING_BODY_FIELDS) return VARIES;
    if (typeof x === 'string') return varying.has(x) ? VARIES : x;
    if (x === null || typeof x !== 'object') return x;
    if (Array.isArray(x)) return x.map((y) => replace(y));
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, replace(y, k)]));
  };
  collect(v);
  return replace(v);
}

/** The response head by header name, a repeated name's values in arrival order; `drop` leaves lines out. */
function headLines(r: RawResponse, drop: (name: string, value: string) => boolean = () => false): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of r.headerList) if (!drop(name, value)) (out[name] ??= []).push(name in VARYING_HEADERS ? VARIES : value);
  return out;
}

/** Every leaf of a JSON value by its path (`.headers.vary.0`), as JSON text. */
function leaves(v: Json, path: string, out: Map<string, string>): Map<string, string> {
  const entries = v !== null && typeof v === 'object' ? Object.entries(v) : [];
  if (entries.length === 0) out.set(path, JSON.stringify(v));
  for (const [k, x] of entries) leaves(x, `${path}.${k}`, out);
  return out;
}

/** Where two values differ, one line per leaf: `path: uws X, node Y`. */
function differences(uws: Json, node: Json): string[] {
  const a = leaves(uws, '', new Map());
  const b = leaves(node, '', new Map());
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.filter((p) => a.get(p) !== b.get(p)).map((p) => `${p.slice(1)}: uws ${a.get(p) ?? '(absent)'}, node ${b.get(p) ?? '(absent)'}`);
}

/** The COMPARED_SERIES samples of a scrape, keyed by name and labels as exposed. */
async function counters(gw: Gateway): Promise<Map<string, number>> {
  const r = await request(`${gw.adminUrl}/metrics`, { token: gw.tokens.root });
  assert.equal(r.status, 200, r.text);
  const out = new Map<string, number>();
  for (const line of r.text.split('\n')) {
    const m = /^(switchyard_[a-z_]+)(\{.*\})? (\S+)$/.exec(line);
    if (m && COMPARED_SERIES.includes(m[1]!)) out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

const requestsCounted = (m: Map<string, number>) => [...m].filter(([k]) => k.startsWith('switchyard_requests_total{')).reduce((s, [, v]) => s + v, 0);

const support = uwsSupport();

test(
  'engine parity: the same requests to a uws and a node gateway get the same answers, access-log lines, spans and metrics',
  { ...BOUNDED, skip: support.ok ? false : `no uws engine to compare: ${support.reason}` },
  async (t) => {
    const up = await startUpstream(t);
    const rx = await startOtlpReceiver(t);
    const deadPort = await freePort();
    const edit = (c: Record<string, Json>) => {
      c.log = { ...(c.log as Record<string, Json>), access: { enabled: true, path: 'access.log' } };
      c.metrics = { enabled: true };
      c.tracing = { endpoint: rx.url, sampleRatio: 1, serviceName: 'parity' };
      c.requestId = { enabled: true };
    };
    const started = await Promise.all(ENGINES.map((engine) => startGateway(t, { engine, workers: 1, keys: [ROOT_KEY], edit })));
    const gw = { uws: started[0]!, node: started[1]! };
    await Promise.all(started.map((g) => apply(g, entities(up.target, deadPort))));

    const answers: Record<Engine, RawResponse[]> = { uws: [], node: [] };
    for (const engine of ENGINES) {
      for (const c of CASES) {
        const r = await rawRequest(gw[engine].dataPort, c.head, c.body ?? '');
        assert.equal(r.status, c.status, `${engine}: ${c.name}: ${r.raw.slice(0, 600)}`);
        c.check?.(r);
        answers[engine].push(r);
      }
    }
    const id = (e: Engine, i: number) => answers[e][i]!.headers['x-request-id']!;
    for (const e of ENGINES) assert.ok(CASES.every((_, i) => /\S/.test(id(e, i) ?? '')), `${e}: every answer carries a request id`);

    const waitForLines = (e: Engine) =>
      waitFor(`${e}: an access-log line for every request`, () => {
        const byId = new Map(accessLogLines(gw[e]).map((l) => [String(l.requestId), l]));
        return CASES.every((_, i) => byId.has(id(e, i))) ? byId : undefined;
      });
    const [uwsLines, nodeLines] = await Promise.all([waitForLines('uws'), waitForLines('node')]);
    const lines = { uws: uwsLines, node: nodeLines };

    const serverSpan = (e: Engine, i: number): ReceivedSpan | undefined => rx.spans.find((s) => s.kind === SERVER && s.attributes['switchyard.request_id'] === id(e, i));
    await rx.waitForSpans('a server span for every traced request', () => ENGINES.every((e) => CASES.every((c, i) => !c.traced || serverSpan(e, i) !== undefined)));

    const listedSeen = LISTED_HEAD_LINES.map(() => 0);
    const dropListed = (e: Engine) => (name: string, value: string) => {
      const k = LISTED_HEAD_LINES.findIndex((u) => u.engine === e && u.drop(name, value));
      if (k !== -1) listedSeen[k]!++;
      return k !== -1;
    };

    const seen = (e: Engine, i: number): Seen => {
      const r = answers[e][i]!;
      const line = lines[e].get(id(e, i))!;
      const span = serverSpan(e, i);
      return {
        status: r.status,
        headers: headLines(r, dropListed(e)),
        body: r.json === undefined ? r.text : scrubJson(r.json),
        log: Object.fromEntries(Object.entries(line).map(([k, v]) => [k, k in VARYING_LOG_FIELDS && v !== null ? VARIES : v])),
        span:
          span === undefined
            ? null
            : {
                name: span.name,
                statusCode: span.statusCode,
                attributes: Object.fromEntries(Object.entries(span.attributes).map(([k, v]) => [k, k in VARYING_SPAN_ATTRIBUTES ? VARIES : v])),
              },
      };
    };

    for (const [i, c] of CASES.entries()) {
      await t.test(`${c.head[0]}: ${c.name}`, () => {
        const [u, n] = [seen('uws', i), seen('node', i)];
        assert.deepEqual(differences(u, n), []);
        assert.equal(u.span !== null, c.traced, c.traced ? 'a server span was recorded' : 'no span for an answer given before a cluster route took the request');
        assert.equal(u.log.traceId !== null, c.traced, "the access log's traceId is there exactly when a trace was recorded");
        for (const e of ENGINES) assert.equal(serverSpan(e, i)?.traceId ?? null, lines[e].get(id(e, i))!.traceId, `${e}: the span is the trace the access log names`);
      });
    }

    await t.test('metrics: the same request counters, series by series', async () => {
      const scrape = (e: Engine) =>
        waitFor(`${e}: every request counted`, async () => {
          const m = await counters(gw[e]);
          return requestsCounted(m) === CASES.length ? m : undefined;
        });
      const [u, n] = await Promise.all([scrape('uws'), scrape('node')]);
      assert.ok(COMPARED_SERIES.every((name) => [...u.keys()].some((k) => k.startsWith(`${name}{`))), `a series of each compared counter: ${[...u.keys()].join(', ')}`);
      assert.deepEqual(differences(Object.fromEntries(u), Object.fromEntries(n)), []);
      t.diagnostic(`${u.size} counter series compared`);
    });

    await t.test('each head line docs/engines.md lists for one engine still happens there (else the page is wrong)', () => {
      assert.deepEqual(
        LISTED_HEAD_LINES.filter((_, k) => listedSeen[k] === 0).map((u) => u.why),
        [],
      );
    });

  },
);
