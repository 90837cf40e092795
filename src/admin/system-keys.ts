import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminKeyConfig } from '../shared/gateway-config-schema.js';
import type { Identity } from './identity.js';
import type { TokenResolver } from './authorize.js';
import { masksOf } from './scopes.js';

export function sha256(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

interface SystemKey {
  digest: Buffer;
  identity: Identity;
}

/**
 * System keys from admin.keys. Only SHA-256 digests are held in memory; a presented
 * token is hashed once and compared against every key in constant time, so timing
 * reveals neither which key matched nor how much of it.
 */
export class SystemKeyRing implements TokenResolver {
  private readonly keys: SystemKey[];

  constructor(keys: readonly AdminKeyConfig[], env: NodeJS.ProcessEnv = process.env) {
    this.keys = keys.map((k) => {
      const digest =
        k.tokenSha256 !== undefined
          ? Buffer.from(k.tokenSha256, 'hex')
          : sha256(k.token ?? env[k.tokenEnv as string] ?? '');
      const identity: Identity = {
        id: k.id,
        kind: k.tenant ? 'tenant' : 'system',
        tenant: k.tenant ?? null,
        scopes: [...k.scopes],
        masks: masksOf(k.scopes),
      };
      return { digest, identity };
    });
  }

  resolve(token: string): Identity | null {
    return this.find(sha256(token));
  }

  /** The identity for a token's digest, or null. Visits every key whatever matches. */
  find(digest: Buffer): Identity | null {
    let found: Identity | null = null;
    for (const k of this.keys) {
      if (timingSafeEqual(k.digest, digest) && found === null) found = k.identity;
    }
    return found;
  }
}
