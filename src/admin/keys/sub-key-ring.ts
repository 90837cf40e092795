import { timingSafeEqual } from 'node:crypto';
import type { KeyRepo } from '../../store/key-repo.js';
import type { TokenResolver } from '../authorize.js';
import type { Identity } from '../identity.js';
import { masksOf } from '../scopes.js';
import { fingerprint, hasValidChecksum, isSubKeyShaped } from './key-format.js';
import type { KeyUsage } from './key-usage.js';

export interface SubKeyStats {
  /** Tokens with the sub-key prefix refused on shape or checksum alone (no store query). */
  refusedByChecksum: number;
}

/**
 * Resolves tenant sub-keys. A token with the `syk_` prefix whose checksum fails is
 * refused before the store is asked; otherwise its fingerprint is looked up and
 * compared in constant time. Revocation and expiry are read from the store on every
 * call: they take effect on the next request.
 */
export class SubKeyRing implements TokenResolver {
  readonly stats: SubKeyStats = { refusedByChecksum: 0 };

  constructor(
    private readonly keys: KeyRepo,
    private readonly usage: KeyUsage,
    private readonly clock: () => number = Date.now,
  ) {}

  async resolve(token: string): Promise<Identity | null> {
    if (!isSubKeyShaped(token)) return null;
    if (!hasValidChecksum(token)) {
      this.stats.refusedByChecksum++;
      return null;
    }
    const fp = fingerprint(token);
    const k = await this.keys.byFingerprint(fp);
    if (!k || !timingSafeEqual(Buffer.from(k.fingerprint, 'hex'), Buffer.from(fp, 'hex'))) return null;
    const now = this.clock();
    if (k.revokedAt !== null || (k.expiresAt !== null && k.expiresAt <= now)) return null;
    this.usage.touch(k.id, now);
    return { id: k.id, kind: 'tenant', tenant: k.tenant, scopes: k.scopes, masks: masksOf(k.scopes), expiresAt: k.expiresAt };
  }
}
