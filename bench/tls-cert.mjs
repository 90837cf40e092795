// The certificate both TLS targets serve (the gateway's TLS port and nginx's `listen ... ssl`),
// made with the openssl CLI at bench start into a temporary folder that goes with the others.
// Self-signed is enough: wrk does not verify, and the sanity request skips verification too.
// One certificate and one key type (EC P-256) for both, so the handshake and the record
// layer cost the two servers the same.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The name in the certificate (its DNS SAN); wrk sends the URL's IP as SNI, which the gateway's `default` certificate answers. */
export const BENCH_TLS_NAME = 'bench.switchyard.test';

export function opensslAvailable() {
  return spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes a self-signed certificate for BENCH_TLS_NAME, valid a week, in a temporary folder of
 * `procs`. Returns the PEMs (for the gateway's `cert` entity) and their files (for nginx).
 */
export function makeBenchCertificate(procs) {
  const dir = procs.tmp('switchyard-bench-tls-');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '7',
      '-subj', `/CN=${BENCH_TLS_NAME}`, '-addext', `subjectAltName=DNS:${BENCH_TLS_NAME}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 },
  );
  return { certificate: readFileSync(certFile, 'utf8'), privateKey: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}
