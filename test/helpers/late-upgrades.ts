// Run as a child process: a bare uWS app that completes each WebSocket handshake on the next
// turn (as the gateway does once its upstream answered), `mode` "adapter" through
// upgradeLater(), "corked" inside res.cork(). The open handler allocates small native buffers
// filled with 0x10, so memory uWS freed during the upgrade is reused at once. Each client sends
// one message and must get 1000 back; the result goes to stdout as JSON.
import { WebSocket } from 'ws';
import { upgradeLater, uws } from '../../src/worker/engine/uws/uws.js';

const [mode = 'adapter', countArg = '200'] = process.argv.slice(2);
const count = Number(countArg);
const kept: Buffer[] = [];
const codes = new Map<number, number>();
const app = uws.App();
app.ws('/*', {
  idleTimeout: 0,
  upgrade: (res, req, context) => {
    const key = req.getHeader('sec-websocket-key');
    let aborted = false;
    res.onAborted(() => (aborted = true));
    setImmediate(() => {
      if (aborted) return;
      const status = '101 Switching Protocols\r\nX-Request-Id: late';
      if (mode === 'corked') {
        res.cork(() => {
          res.writeStatus(status);
          res.upgrade({}, key, '', '', context);
        });
      } else upgradeLater(res, {}, key, '', context, status);
    });
  },
  open: () => {
    for (let size = 0x20; size <= 0x200; size += 8) kept.push(Buffer.allocUnsafeSlow(size).fill(0x10));
    if (kept.length > 4096) kept.length = 0;
  },
  message: (ws) => ws.end(1000, 'done'),
});

app.listen('127.0.0.1', 0, async (listen) => {
  const port = uws.us_socket_local_port(listen);
  let requestIds = 0;
  for (let i = 0; i < count; i++) {
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
      ws.on('upgrade', (res) => void (res.headers['x-request-id'] === 'late' && requestIds++));
      ws.on('open', () => ws.send('hello'));
      ws.on('error', () => undefined);
      ws.on('close', (c) => resolve(c));
    });
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  process.stdout.write(JSON.stringify({ codes: Object.fromEntries(codes), requestIds }) + '\n');
  process.exit(0);
});
