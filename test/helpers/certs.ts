import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway certificate authority made with openssl, in a folder removed after the test. */
export interface Pki {
  dir: string;
  /** The CA certificate, PEM. */
  ca: string;
  serial: number;
}

export interface Issued {
  certificate: string;
  privateKey: string;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

export function makePki(t: { after(fn: () => void): void }): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'sy-pki-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Switchyard Test CA']);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    ['[ca]', 'default_ca = d', '[d]', `dir = ${dir}`, 'database = $dir/index.txt', 'new_certs_dir = $dir', 'serial = $dir/serial', 'default_md = sha256', 'policy = any', 'unique_subject = no', '[any]', 'commonName = supplied', ''].join('\n'),
  );
  return { dir, ca: readFileSync(join(dir, 'ca.pem'), 'utf8'), serial: 1 };
}

const stamp = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';

/** A certificate for `names` (DNS SANs), valid from `from` (default an hour ago) to `to` (default in 90 days), signed by the CA. */
export function issue(pki: Pki, names: string[], o: { from?: Date; to?: Date; keyType?: 'ec' | 'rsa' } = {}): Issued {
  const id = `c${pki.serial++}`;
  const keyArgs = o.keyType === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  openssl(pki.dir, ['req', ...keyArgs, '-nodes', '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', `/CN=${names[0]}`]);
  writeFileSync(join(pki.dir, `${id}.ext`), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
  const from = o.from ?? new Date(Date.now() - 3_600_000);
  const to = o.to ?? new Date(Date.now() + 90 * 86_400_000);
  openssl(pki.dir, [
    'ca', '-batch', '-config', 'ca.cnf', '-keyfile', 'ca.key', '-cert', 'ca.pem', '-in', `${id}.csr`, '-out', `${id}.pem`,
    '-startdate', stamp(from), '-enddate', stamp(to), '-extfile', `${id}.ext`, '-notext',
  ]);
  return { certificate: readFileSync(join(pki.dir, `${id}.pem`), 'utf8'), privateKey: readFileSync(join(pki.dir, `${id}.key`), 'utf8') };
}
