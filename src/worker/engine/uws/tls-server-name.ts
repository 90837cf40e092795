import { createPrivateKey, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompiledCert } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import { certKeyContext, openStored, processSecretBox } from '../../../shared/secret-box.js';
import type { TemplatedApp } from './uws.js';
import { CIPHERS } from '../tls-ciphers.js';


/**
 * Adds server name `name` to `app` with `cert` (id `tenant/name`), and the data port's
 * routes (`routes`, given the app browsed to that name) as that name's router: uWS routes
 * each server name on its own. uWS loads a TLS
 * context from files only: the key is written for that one call encrypted under a
 * passphrase that exists only in memory, and the files are deleted at once, so the
 * plaintext key never reaches the disk. A sealed key opens with the process's key (secrets.keyEnv).
 */
export function loadServerName(
  app: TemplatedApp,
  name: string,
  cert: CompiledCert,
  id: string,
  routes: (app: TemplatedApp) => void,
  log: Logger,
): void {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
  try {
    const passphrase = randomBytes(32).toString('base64url');
    const key = createPrivateKey(openStored(cert.privateKey, certKeyContext(id), processSecretBox())).export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase });
    writeFileSync(join(dir, 'key.pem'), key, { mode: 0o600 });
    writeFileSync(join(dir, 'cert.pem'), cert.certificate, { mode: 0o600 });
    app.addServerName(name, { key_file_name: join(dir, 'key.pem'), cert_file_name: join(dir, 'cert.pem'), passphrase, ssl_ciphers: CIPHERS });
    routes(app.domain(name));
  } catch (err) {
    // Never the error itself: a key parse error may quote the key.
    log.error({ name, cert: id, reason: (err as { code?: string }).code ?? 'unreadable' }, 'TLS: cannot load the certificate for a server name; its handshakes are refused');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
