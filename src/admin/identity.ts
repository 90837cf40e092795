import type { Family } from '../contracts/scopes.js';

/** Who made an admin call, as resolved from its bearer token or console session. Never holds the token. */
export interface Identity {
  id: string;
  kind: 'system' | 'tenant';
  tenant: string | null;
  scopes: readonly string[];
  masks: Record<Family, number>;
  /** A tenant sub-key's or console session's expiry (ms); the keys it issues expire with it at the latest. */
  expiresAt?: number | null;
  /** Set for a console session (admin.oidc sign-in): whom the console names (the email claim, else the subject). */
  session?: { name: string };
}
