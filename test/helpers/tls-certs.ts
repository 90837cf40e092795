import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real certificates for TLS tests, made with the openssl CLI in a temporary folder: a CA
 * that nothing trusts by default, and leaf certificates it signs (server certificates for
 * 127.0.0.1 and localhost, or client certificates). EC P-256 keys: fast to make.
 */

export interface Pem {
  cert: string;
  key: string;
}

export interface TestCa extends Pem {
  /** A leaf certificate signed by this CA; `sans` as openssl writes them (`IP:127.0.0.1`, `DNS:localhost`). */
  issue(commonName: string, sans: string[], usage: 'server' | 'client'): Pem;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed CA named `name`, valid for a day. */
export function makeCa(name: string): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'sy-tls-'));
  try {
    openssl(dir, ['req', '-x509', ...keyArgs, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', `/CN=${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    const ca = { cert: readFileSync(join(dir, 'ca.crt'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
    return { ...ca, issue: (cn, sans, usage) => issue(ca, cn, sans, usage) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function issue(ca: Pem, commonName: string, sans: string[], usage: 'server' | 'client'): Pem {
  const dir = mkdtempSync(join(tmpdir(), 'sy-tls-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key);
    const ext = [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      `extendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
      ...(sans.length ? [`subjectAltName=${sans.join(',')}`] : []),
    ];
    writeFileSync(join(dir, 'ext.cnf'), ext.join('\n') + '\n');
    openssl(dir, ['req', '-new', ...keyArgs, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${commonName}`]);
    openssl(dir, ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '1', '-extfile', 'ext.cnf']);
    return { cert: readFileSync(join(dir, 'leaf.crt'), 'utf8'), key: readFileSync(join(dir, 'leaf.key'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A certificate and its key written to files, as curl takes them (--cert, --key). */
export interface PemFiles {
  name: string;
  /** The certificate's path, and its PEM text. */
  cert: string;
  pem: string;
  key: string;
}

/** Writes `pem` into `dir` as `<name>.crt` and `<name>.key`. */
export function pemFiles(dir: string, name: string, pem: Pem): PemFiles {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  writeFileSync(cert, pem.cert);
  writeFileSync(key, pem.key, { mode: 0o600 });
  return { name, cert, pem: pem.cert, key };
}
