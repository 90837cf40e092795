// One runtime's first minutes with the gateway: init, a TLS listener, run, a cluster, a route
// (WebSocket on) and a self-signed `cert` published, then one HTTP/1.1 request, one HTTP/2
// request over TLS (ALPN h2), one WebSocket message echoed through the gateway, gRPC calls
// to an h2c upstream (runtime-smoke/grpc.mjs), and SIGTERM with a clean exit. Each step is
// named in the result, passed or failed, with its time.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { freePort, sh, within } from './proc.mjs';
import { grpc, grpcCleanUp } from './grpc.mjs';

const STEP_MS = 30_000;
const HOST = 'smoke.test';

/**
 * Runs the steps in order: a failed setup step (the first three) stops the scenario, a failed
 * request step does not. `engine`: worker.json listen.engine (auto: what users get).
 * `expect`: the engine `validate` must name (auto: uws where its binary has a build, else node).
 */
export async function scenario({ node, app, work, log, engine = 'auto', expect }) {
  const cli = (args, opts = {}) => sh(node, [join(app, 'bin', 'run.js'), ...args], { cwd: work, timeoutMs: STEP_MS, ...opts });
  const results = [];
  const ctx = { node, app, work, cli, log, engineChoice: engine, expect };
  const steps = [
    ['init and validate', init, true],
    ['run (ready line)', run, true],
    ['publish route and cert', publish, true],
    ['HTTP/1.1 request', http1],
    ['HTTP/2 request over TLS', http2],
    ['WebSocket echo', webSocket],
    ['gRPC over h2', (ctx) => grpc(ctx, HOST)],
    ['SIGTERM, clean exit', stop],
  ];
  try {
    for (const [step, fn, required] of steps) {
      const started = Date.now();
      try {
        const detail = await within(STEP_MS * 2, step, fn(ctx));
        results.push({ step, ok: true, detail });
        log(`  ok   ${step}${detail ? `: ${detail}` : ''} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (err) {
        results.push({ step, ok: false, detail: err.message });
        log(`  FAIL ${step}: ${err.message.split('\n').slice(0, 6).join(' | ')}`);
        if (required) break;
      }
    }
  } finally {
    await cleanUp(ctx);
  }
  return { results, engine: ctx.engine };
}

async function init(ctx) {
  [ctx.dataPort, ctx.tlsPort, ctx.adminPort] = [await freePort(), await freePort(), await freePort()];
  const dir = join(ctx.work, 'gw');
  const made = JSON.parse((await ctx.cli(['init', '--dir', dir, '--port', String(ctx.dataPort), '--admin-port', String(ctx.adminPort), '--json'])).out);
  const config = JSON.parse(readFileSync(made.config, 'utf8'));
  config.listen.tls = { port: ctx.tlsPort, host: '127.0.0.1' };
  config.workers = 1;
  config.listen.engine = ctx.engineChoice;
  writeFileSync(made.config, JSON.stringify(config, null, 2));
  ctx.init = made;
  ctx.env = { ...process.env, [made.tokenEnv]: made.token };
  const checked = JSON.parse((await ctx.cli(['validate', '--config', made.config], { env: ctx.env })).out);
  ctx.engine = checked.listeners.map((l) => l.line).join('; ');
  ctx.engineName = checked.listeners[0].engine;
  if (ctx.expect && checked.listeners.some((l) => l.engine !== ctx.expect || !l.why)) throw new Error(`validate chose ${ctx.engine}, expected ${ctx.expect} with its reason`);
  return ctx.engine;
}

async function run(ctx) {
  ctx.gateway = spawn(ctx.node, [join(ctx.app, 'bin', 'run.js'), 'run', '--config', ctx.init.config], { cwd: ctx.work, env: ctx.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  ctx.gateway.stderr.setEncoding('utf8').on('data', (d) => (err = (err + d).slice(-4000)));
  ctx.gateway.stdout.setEncoding('utf8').on('data', (d) => (out = (out + d).slice(-20_000)));
  ctx.output = () => out;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within ${STEP_MS} ms\n${out.slice(-2000)}\n${err}`)), STEP_MS);
    const check = () => {
      if (/^switchyard ready /m.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    ctx.gateway.stdout.on('data', check);
    ctx.gateway.once('exit', (code) => reject(new Error(`switchyard run exited (${code}) before ready\n${out.slice(-2000)}\n${err}`)));
  });
  const picked = out.split('\n').find((l) => l.includes('data plane engine'));
  return `pid ${ctx.gateway.pid}${picked ? `, logged: ${JSON.parse(picked).msg}` : ''}`;
}

async function publish(ctx) {
  ctx.upstream = createServer((req, res) => res.end(`upstream saw ${req.method} ${req.url} over HTTP/${req.httpVersion}`));
  ctx.echo = new WebSocketServer({ server: ctx.upstream });
  ctx.echo.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
  await new Promise((resolve) => ctx.upstream.listen(0, '127.0.0.1', resolve));
  await sh('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'smoke.key', '-out', 'smoke.pem', '-days', '2', '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`], { cwd: ctx.work });
  const env = { ...process.env, SWITCHYARD_ADMIN: ctx.init.admin, SWITCHYARD_TOKEN: ctx.init.token };
  const set = (ctx.set = (kind, name, doc) => ctx.cli(['config', 'set', kind, name], { env, input: JSON.stringify(doc) }));
  ctx.publishGo = async () => {
    const go = JSON.parse((await ctx.cli(['publish', 'go'], { env })).out);
    if (go.ok !== true) throw new Error(`publish go: ${JSON.stringify(go)}`);
    return go;
  };
  await set('cluster', 'api', { targets: [`127.0.0.1:${ctx.upstream.address().port}`] });
  await set('route', 'api', { cluster: 'api', pathPrefix: '/api', websocket: true });
  await set('cert', 'smoke', { certificate: readFileSync(join(ctx.work, 'smoke.pem'), 'utf8'), privateKey: readFileSync(join(ctx.work, 'smoke.key'), 'utf8') });
  return `generation ${(await ctx.publishGo()).generation}`;
}

async function http1(ctx) {
  const res = await fetch(`http://127.0.0.1:${ctx.dataPort}/api/one?x=1`, { signal: AbortSignal.timeout(STEP_MS) });
  const body = await res.text();
  if (res.status !== 200 || body !== 'upstream saw GET /api/one?x=1 over HTTP/1.1') throw new Error(`${res.status} ${body}`);
  return '200 from the upstream';
}

/** uws speaks HTTP/1.1 only: there the TLS listener must not offer h2, and the request goes as HTTP/1.1. */
async function http2(ctx) {
  if (ctx.engineName === 'uws') {
    const { out } = await sh('curl', ['-sS', '-k', '--http2', '--max-time', '20', '--resolve', `${HOST}:${ctx.tlsPort}:127.0.0.1`, '-w', '\n%{http_version}', `https://${HOST}:${ctx.tlsPort}/api/two`]);
    if (!out.endsWith('\n1.1') || !out.startsWith('upstream saw GET /api/two')) throw new Error(`curl --http2 on uws: ${out}`);
    return 'engine uws: ALPN offers http/1.1 only, the request went as HTTP/1.1 (h2 not tested here)';
  }
  return new Promise((resolve, reject) => {
    const session = connect(`https://127.0.0.1:${ctx.tlsPort}`, { servername: HOST, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] });
    const timer = setTimeout(() => fail(new Error(`no answer within ${STEP_MS} ms`)), STEP_MS);
    const fail = (err) => {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    };
    session.once('error', fail);
    session.once('connect', () => {
      const alpn = session.alpnProtocol;
      if (alpn !== 'h2') return fail(new Error(`ALPN chose ${alpn}, not h2`));
      const req = session.request({ ':path': '/api/two', ':authority': HOST });
      let body = '';
      let status = 0;
      req.setEncoding('utf8');
      req.on('response', (h) => (status = h[':status']));
      req.on('data', (d) => (body += d));
      req.on('error', fail);
      req.on('end', () => {
        clearTimeout(timer);
        session.close();
        if (status !== 200 || !body.startsWith('upstream saw GET /api/two')) reject(new Error(`${status} ${body}`));
        else resolve(`ALPN h2, 200 from the upstream`);
      });
    });
  });
}

function webSocket(ctx) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${ctx.dataPort}/api/ws`, { handshakeTimeout: STEP_MS });
    const timer = setTimeout(() => (ws.terminate(), reject(new Error(`no echo within ${STEP_MS} ms`))), STEP_MS);
    ws.once('error', (err) => (clearTimeout(timer), reject(err)));
    ws.once('open', () => ws.send('hello through the gateway'));
    ws.once('message', (data) => {
      clearTimeout(timer);
      ws.close();
      if (String(data) === 'hello through the gateway') resolve('echoed');
      else reject(new Error(`echo: ${data}`));
    });
  });
}

async function stop(ctx) {
  const gw = ctx.gateway;
  const exited = new Promise((resolve) => gw.once('exit', (code, signal) => resolve({ code, signal })));
  gw.kill('SIGTERM');
  const { code, signal } = await within(20_000, 'exit after SIGTERM', exited);
  if (code !== 0) throw new Error(`exit ${code ?? signal}\n${ctx.output().slice(-1500)}`);
  return 'exit 0';
}

/** The gateway this scenario started (SIGKILL if SIGTERM did not end it) and the upstream. */
async function cleanUp(ctx) {
  const gw = ctx.gateway;
  if (gw && gw.exitCode === null && gw.signalCode === null) {
    const exited = new Promise((resolve) => gw.once('exit', resolve));
    gw.kill('SIGTERM');
    const timer = setTimeout(() => gw.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  grpcCleanUp(ctx);
  ctx.echo?.clients.forEach((c) => c.terminate());
  ctx.upstream?.closeAllConnections();
  ctx.upstream?.close();
}
