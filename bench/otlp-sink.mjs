// An OTLP/HTTP collector stand-in for the tracing target: takes every export, answers
// 200 with an empty partial-success body, keeps nothing; counts spans batches received.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
let batches = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    batches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`ready port=${port}\n`));
process.on('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${batches} exports received\n`);
  process.exit(0);
});
