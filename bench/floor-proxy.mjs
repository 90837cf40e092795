// The floor of this stack for a proxied route: uWebSockets.js in,
// undici `Pool.dispatch` out, and nothing else (no routing, no hop-by-hop rules, no
// X-Forwarded-*, no timeouts, no backpressure, GET only, whole response buffered).
// The handler uses undici's own callbacks (onHeaders, onData, …), as the gateway does:
// the newer onResponse* interface costs an adapter and a parsed head per request.
// Not a usable proxy: it tells how close the gateway's cluster route is to what
// uWS + undici cost by themselves on this machine. Runs in its own process.
//
//   node bench/floor-proxy.mjs <upstream url> [port]
//
// Prints one line `ready port=N` on stdout once it listens.
import { Pool } from 'undici';
import { listenUntilParentExits, loadUws } from './uws-native.mjs';

const uws = loadUws('floor-proxy');

const pool = new Pool(process.argv[2]);
const SKIP = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'date']);

const app = uws.App();
app.any('/*', (res, req) => {
  const query = req.getQuery();
  const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
  const headers = [];
  req.forEach((k, v) => {
    if (k !== 'connection') headers.push(k, v);
  });
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  let status = 200;
  let head = null;
  const chunks = [];
  pool.dispatch(
    { path, method: 'GET', headers },
    {
      onConnect() {},
      onHeaders(statusCode, raw) {
        status = statusCode;
        head = raw;
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        if (aborted) return;
        res.cork(() => {
          res.writeStatus(String(status));
          for (let i = 0; i < head.length; i += 2) {
            const k = head[i].toString('latin1').toLowerCase();
            if (!SKIP.has(k)) res.writeHeader(k, head[i + 1].toString('latin1'));
          }
          res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        });
      },
      onError() {
        if (!aborted) res.cork(() => res.writeStatus('502 Bad Gateway').end());
      },
    },
  );
});

listenUntilParentExits(uws, app, 'floor-proxy', Number(process.argv[3] ?? 0), () => pool.close());
