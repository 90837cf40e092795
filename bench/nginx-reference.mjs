// A reference point, not a target: nginx (C, one worker process) proxying to the same
// upstream with the same job as the gateway's cluster route (HTTP/1.1 keep-alive pool,
// X-Forwarded-For/Proto/Host set, no access log unless asked). It tells what a proxy
// costs on this machine when almost all of its time is the kernel's: the fastify ratio
// of issue 3 item 9 reads differently on machines where system calls are cheap or dear
// against JavaScript, and nginx / fastify in the same run shows which kind of machine it is.
// Runs only when `nginx` is installed (`apt-get install nginx-light`); the bench does
// not install it (Debian's package starts a system service on port 80).
// With a TLS port, certificate and key, the same server also terminates TLS there
// (`listen ... ssl`, TLS 1.2 and 1.3 like the gateway's TLS port): the reference of the
// gateway's TLS target, proxying to the same upstream over the same keep-alive pool. With an
// h2 port too, it serves HTTP/2 over TLS there (the reference of the node engine's h2 target):
// `listen ... ssl http2`, which nginx 1.22 (Debian 12) needs; 1.25.1 and later read it as
// `http2 on` for that port.
//
//   [SY_BENCH_NGINX_ACCESS_LOG=<file>] node bench/nginx-reference.mjs <nginx binary> <upstream host:port> <port> [<tls port> <cert.pem> <key.pem> [<h2 port>]]
//
// Writes its configuration to a temporary folder, starts `nginx` in the foreground
// (it inherits this process's CPU pinning), prints `ready port=N` once its ports
// accept, and stops nginx and removes the folder when the parent goes.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onParentGone } from './lifecycle.mjs';

const [bin, upstream, portArg, tlsPortArg, certFile, keyFile, h2PortArg] = process.argv.slice(2);
if (!bin || !upstream || !portArg || (tlsPortArg && (!certFile || !keyFile))) {
  process.stderr.write('usage: node bench/nginx-reference.mjs <nginx binary> <upstream host:port> <port> [<tls port> <cert.pem> <key.pem> [<h2 port>]]\n');
  process.exit(2);
}
const port = Number(portArg); // nginx cannot report a kernel-chosen port: the caller picks a free one
const tlsPort = tlsPortArg ? Number(tlsPortArg) : null;
const h2Port = tlsPort && h2PortArg ? Number(h2PortArg) : null;
const location = `location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
    }`;
// A server of its own: nginx 1.22 ends an h2 connection after keepalive_requests (1,000), and
// h2load counts the streams in flight then as failed; the gateway sets no such limit.
const h2 = h2Port
  ? `server {
    listen 127.0.0.1:${h2Port} ssl http2;
    ssl_certificate ${certFile};
    ssl_certificate_key ${keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    keepalive_requests 1000000;
    ${location}
  }`
  : '';
const tls = tlsPort
  ? `listen 127.0.0.1:${tlsPort} ssl;
    ssl_certificate ${certFile};
    ssl_certificate_key ${keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;`
  : '';

// SY_BENCH_NGINX_ACCESS_LOG=<file>: one JSON line per request to that file, buffered as the
// gateway's access log is (256 KiB, written at least every 200 ms), with the fields nginx
// has of the gateway's (no tenant, route or trace id; its times in seconds, the upstream's
// quoted: it may list several): what an access log costs nginx here.
const accessLogFile = process.env.SY_BENCH_NGINX_ACCESS_LOG;
const accessLog = accessLogFile
  ? `log_format bench_json escape=json '{"time":"$time_iso8601","requestId":"$request_id","method":"$request_method",'
      '"path":"$request_uri","status":$status,"bytesReceived":$request_length,"bytesSent":$bytes_sent,'
      '"durationS":$request_time,"upstream":"$upstream_addr","upstreamS":"$upstream_response_time",'
      '"client":"$remote_addr","userAgent":"$http_user_agent","referer":"$http_referer"}';
  access_log ${accessLogFile} bench_json buffer=256k flush=200ms;`
  : 'access_log off;';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-nginx-'));
const temp = (name) => `${name}_temp_path ${join(dir, name)};`;
writeFileSync(
  join(dir, 'nginx.conf'),
  `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  ${accessLog}
  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}
  upstream bench_upstream { server ${upstream}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    ${tls}
    ${location}
  }
  ${h2}
}
`,
);

const nginx = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
let stopping = false;
const cleanUp = () => rmSync(dir, { recursive: true, force: true });
nginx.once('error', (err) => {
  process.stderr.write(`nginx-reference: cannot start ${bin}: ${err.message}\n`);
  cleanUp();
  process.exit(1);
});
nginx.once('exit', (code, signal) => {
  cleanUp();
  if (!stopping) process.stderr.write(`nginx-reference: nginx exited (code ${code}, signal ${signal})\n`);
  process.exit(stopping ? 0 : 1);
});
onParentGone(() => {
  if (stopping) return;
  stopping = true;
  nginx.kill('SIGTERM'); // fast shutdown; the exit handler removes the folder
  setTimeout(() => nginx.kill('SIGKILL'), 5_000).unref();
});

// Ready when every port accepts a connection.
const deadline = Date.now() + 10_000;
const waiting = [port, tlsPort, h2Port].filter((p) => p !== null);
const probe = () => {
  const s = connect(waiting[0], '127.0.0.1');
  s.once('connect', () => {
    s.destroy();
    waiting.shift();
    if (waiting.length) return probe();
    process.stdout.write(`ready port=${port}\n`);
  });
  s.once('error', () => {
    s.destroy();
    if (Date.now() > deadline) {
      process.stderr.write('nginx-reference: nginx did not listen within 10 s\n');
      stopping = true;
      nginx.kill('SIGKILL');
      return;
    }
    setTimeout(probe, 50);
  });
};
probe();
