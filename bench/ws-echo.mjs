// The WebSocket upstream of the bench: a `ws` server (on node:http) that sends every message
// back as it came (text stays text, binary stays binary), on any path. The WebSocket targets
// reach it directly and through the gateway's `websocket` route. Runs in its own process,
// beside the load generator on the load CPU like the HTTP upstream.
//
//   node bench/ws-echo.mjs [port]
//
// Prints one line `ready port=N` on stdout once it listens; exits when its stdin closes
// (the parent died) or on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import { exitWithParent } from './lifecycle.mjs';

const port = Number(process.argv[2] ?? 0);

const http = createServer((_req, res) => {
  // Not a handshake: the sanity check of a plain GET has nothing to find here.
  res.writeHead(426, { 'content-type': 'text/plain' });
  res.end('WebSocket only\n');
});
// No compression on either side: the gateway relays frames uncompressed, and the direct target must do the same work.
const wss = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: 1 << 20 });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  ws.on('error', () => ws.terminate());
});

http.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ready port=${http.address().port}\n`);
});
exitWithParent(() => {
  for (const ws of wss.clients) ws.terminate();
  http.close();
});
