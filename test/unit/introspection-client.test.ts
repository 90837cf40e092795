import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EndpointUnreachable, introspector } from '../../src/steps/identity/introspection-client.js';
import type { CallTrace } from '../../src/steps/step.js';
import { ServicePools } from '../../src/worker/service-pools.js';
import { UpstreamGuard } from '../../src/shared/upstream-guard.js';

// The endpoint listens on loopback: the policy is deliberately open.
const servicePool = new ServicePools(UpstreamGuard.allowAll()).pool;

interface Seen {
  authorization: string | undefined;
  traceparent: string | undefined;
  contentType: string | undefined;
  body: URLSearchParams;
}

/** A stand-in introspection endpoint: `answer` decides each reply; every request is recorded. */
async function endpoint(t: { after(fn: () => unknown): void }, answer: (res: ServerResponse, body: URLSearchParams) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const body = new URLSearchParams(raw);
      seen.push({ authorization: req.headers.authorization, traceparent: req.headers.traceparent as string | undefined, contentType: req.headers['content-type'], body });
      answer(res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

function recordingTrace(): CallTrace & { ends: number[]; fails: string[] } {
  const tr = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', ends: [] as number[], fails: [] as string[], end: (s: number) => void tr.ends.push(s), fail: (e: string) => void tr.fails.push(e) };
  return tr;
}

test('client_secret_basic with form-urlencoded id and secret (RFC 6749 §2.3.1), the token and its hint in the form, the trace carried and ended', async (t) => {
  const now = Date.now();
  const ep = await endpoint(t, (res) => json(res, 200, { active: true, client_id: 'a b', exp: Math.floor(now / 1000) + 60 }));
  const ask = introspector({ servicePool }, 'default', { url: ep.url, clientId: 'gw:api', clientSecret: 'p@ss wörd+/', timeoutMs: 2_000, tokenTypeHint: 'access_token' });
  const trace = recordingTrace();
  const a = await ask('tok-1', now, trace);
  assert.equal(a.active, true);
  const s = ep.seen[0]!;
  // application/x-www-form-urlencoded: space as '+', ':' and '@' escaped, then base64.
  assert.equal(s.authorization, `Basic ${Buffer.from('gw%3Aapi:p%40ss+w%C3%B6rd%2B%2F').toString('base64')}`);
  assert.match(s.contentType ?? '', /^application\/x-www-form-urlencoded/);
  assert.equal(s.body.get('token'), 'tok-1');
  assert.equal(s.body.get('token_type_hint'), 'access_token');
  assert.equal(s.body.get('client_secret'), null, 'the secret goes in the header only');
  assert.equal(s.traceparent, trace.traceparent);
  assert.deepEqual(trace.ends, [200]);
});

test('no connection, a 5xx or no answer in time: EndpointUnreachable (fail static applies); a 4xx or an answer without a boolean active: another error', async (t) => {
  let mode = '5xx';
  const ep = await endpoint(t, (res) => {
    if (mode === '5xx') return json(res, 503, { error: 'temporarily_unavailable' });
    if (mode === '4xx') return json(res, 401, { error: 'invalid_client' });
    if (mode === 'bad') return json(res, 200, { active: 'yes' });
    // 'slow': never answers within the step's timeout
  });
  const ask = introspector({ servicePool }, 'default', { url: ep.url, clientId: 'gw', clientSecret: 's', timeoutMs: 300 });
  const t5 = recordingTrace();
  await assert.rejects(ask('x', Date.now(), t5), EndpointUnreachable);
  assert.deepEqual(t5.ends, [503]);
  mode = 'slow';
  const started = Date.now();
  const ts = recordingTrace();
  await assert.rejects(ask('x', Date.now(), ts), EndpointUnreachable);
  assert.ok(Date.now() - started < 2_000, 'timeoutMs bounds the call');
  assert.equal(ts.fails.length, 1);
  mode = '4xx';
  await assert.rejects(ask('x', Date.now(), null), (err) => !(err instanceof EndpointUnreachable));
  mode = 'bad';
  await assert.rejects(ask('x', Date.now(), null), (err) => !(err instanceof EndpointUnreachable));

  const closed = introspector({ servicePool }, 'default', { url: 'http://127.0.0.1:1/introspect', clientId: 'gw', clientSecret: 's', timeoutMs: 1_000 });
  await assert.rejects(closed('x', Date.now(), null), EndpointUnreachable);
});
