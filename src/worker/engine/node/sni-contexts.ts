import { createPrivateKey } from 'node:crypto';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import type { CompiledServerTls } from '../../../contracts/generation.js';
import type { Logger } from '../../../shared/logger.js';
import { certKeyContext, openStored, processSecretBox } from '../../../shared/secret-box.js';

import { CIPHERS } from '../tls-ciphers.js';

interface Loaded {
  ctx: SecureContext;
  options: SecureContextOptions;
}

/**
 * The published certificates as TLS contexts, built once per update (never per handshake):
 * exact names, `*.suffix` wildcards, and the default for any other name. A name none
 * serves, without a default, fails its handshake.
 */
export class SniContexts {
  private exact = new Map<string, SecureContext>();
  private wildcard = new Map<string, SecureContext>();
  private fallback: SecureContext | null = null;
  /** The default certificate as options, for the listener's own context (handshakes without a name). */
  defaultOptions: SecureContextOptions | null = null;
  /** The CAs client certificates must chain to (worker.json `listen.tls.clientCertificates`): every context verifies with them. */
  private clientCa: string | null = null;

  constructor(private readonly log: Logger) {}

  /**
   * Client certificates verify against `ca` in every context: OpenSSL verifies with the store
   * of the context SNI picked, so a context without the CAs would verify nothing.
   */
  trustClients(ca: string): void {
    this.clientCa = ca;
  }

  /** The listener's own context when no certificate is the default: the CAs still count. */
  get bareOptions(): SecureContextOptions {
    return { ciphers: CIPHERS, ...(this.clientCa === null ? {} : { ca: this.clientCa }) };
  }

  update(tls: CompiledServerTls | undefined): void {
    const byId = new Map<string, Loaded | null>();
    const loaded = (id: string): Loaded | null => {
      if (!byId.has(id)) byId.set(id, this.load(tls!, id));
      return byId.get(id)!;
    };
    const context = (id: string): SecureContext | null => loaded(id)?.ctx ?? null;
    const exact = new Map<string, SecureContext>();
    const wildcard = new Map<string, SecureContext>();
    for (const [host, id] of Object.entries(tls?.hosts ?? {})) {
      const c = context(id);
      if (c === null) continue;
      if (host.startsWith('*.')) wildcard.set(host.slice(2).toLowerCase(), c);
      else exact.set(host.toLowerCase(), c);
    }
    this.exact = exact;
    this.wildcard = wildcard;
    const fallback = tls?.default ? loaded(tls.default) : null;
    this.fallback = fallback?.ctx ?? null;
    this.defaultOptions = fallback?.options ?? null;
  }

  /** node's SNICallback. */
  readonly select = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    const name = servername.toLowerCase();
    const dot = name.indexOf('.');
    const ctx = this.exact.get(name) ?? (dot > 0 ? this.wildcard.get(name.slice(dot + 1)) : undefined) ?? this.fallback;
    if (ctx) cb(null, ctx);
    else cb(new Error('no certificate for this server name'));
  };

  private load(tls: CompiledServerTls, id: string): Loaded | null {
    const cert = tls.certs[id];
    if (!cert) return null;
    try {
      const key = createPrivateKey(openStored(cert.privateKey, certKeyContext(id), processSecretBox()));
      const options = { key: key.export({ format: 'pem', type: 'pkcs8' }), cert: cert.certificate, ...this.bareOptions };
      return { ctx: createSecureContext(options), options };
    } catch (err) {
      // Never the error itself: a key parse error may quote the key.
      this.log.error({ cert: id, reason: (err as { code?: string }).code ?? 'unreadable' }, 'TLS: cannot load a certificate; its names fail their handshakes');
      return null;
    }
  }
}
