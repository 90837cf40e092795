// A TCP proxy that forwards every chunk `delayMs` after it arrived, in each direction, in
// order (timers of one duration fire in the order they were set), ends included. Run as a
// child process so the test's own load never delays it. argv: targetHost targetPort delayMs.
// Prints `port <n>` once listening; prints `conns <n>` on stdin "count".
import { createServer, connect } from 'node:net';

const [host, port, delay] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
let conns = 0;
const later = (fn) => setTimeout(fn, delay);

function pipeDelayed(from, to) {
  from.on('data', (chunk) => later(() => to.destroyed || to.write(chunk)));
  from.on('end', () => later(() => to.destroyed || to.end()));
  from.on('error', () => later(() => to.destroy()));
  from.on('close', () => later(() => to.destroy()));
}

const server = createServer((client) => {
  conns++;
  const upstream = connect({ host, port });
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  pipeDelayed(client, upstream);
  pipeDelayed(upstream, client);
});
server.listen({ host: '127.0.0.1', port: 0 }, () => process.stdout.write(`port ${server.address().port}\n`));
process.stdin.setEncoding('utf8').on('data', (d) => {
  if (d.includes('count')) process.stdout.write(`conns ${conns}\n`);
});
// The test process gone (its end of stdin closed): so is the proxy.
process.stdin.on('end', () => process.exit(0));
