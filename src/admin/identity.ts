import type { Family } from '../contracts/scopes.js';

/** Who made an admin call, as resolved from its bearer token. Never holds the token. */
export interface Identity {
  id: string;
  kind: 'system' | 'tenant';
  tenant: string | null;
  scopes: readonly string[];
  masks: Record<Family, number>;
  /** A tenant sub-key's expiry (ms); the keys it issues expire with it at the latest. */
  expiresAt?: number | null;
}
