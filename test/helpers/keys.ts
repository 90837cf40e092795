import assert from 'node:assert/strict';
import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Gateway } from './gateway.js';
import { request, type HttpResult } from './http.js';
import type { Json } from './json.js';

/**
 * Tenant sub-keys as a client sees them: the admin calls of the key family, the
 * /metrics counters, and the token format (`syk_` + 32 base62 + 6 base62 CRC-32 of
 * the first 36 characters, most significant first), re-derived here from the
 * documented format rather than imported from src/.
 */

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SUB_KEY = /^syk_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/;

export interface KeyView {
  id: string;
  name: string;
  tenant: string;
  scopes: string[];
  issuer: string;
  state: 'active' | 'revoked' | 'expired';
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface IssuedKey extends KeyView {
  token: string;
  tokenNote: string;
}

/** The 6-character base62 checksum of a token body (the first 36 characters). */
export function checksumOf(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A well-formed sub-key with a valid checksum that nobody issued. */
export function forgeWellFormedKey(): string {
  let body = 'syk_';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return body + checksumOf(body);
}

/** `token` with one character of its random part (default) or checksum changed: same shape, wrong checksum. */
export function breakChecksum(token: string, where: 'random' | 'checksum' = 'random'): string {
  const i = where === 'random' ? 4 + 10 : token.length - 1;
  const c = token[i]!;
  const next = BASE62[(BASE62.indexOf(c) + 1) % 62]!;
  return token.slice(0, i) + next + token.slice(i + 1);
}

/** The 32 random characters between the prefix and the checksum. */
export const randomPart = (token: string) => token.slice(4, 36);

export const fingerprintOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

const keyApi = (gw: Gateway, tenant: string, rest: string) => `${gw.adminUrl}/api/v1/${encodeURIComponent(tenant)}/key/${rest}`;

export function issueKeyRaw(gw: Gateway, token: string, tenant: string, body: unknown): Promise<HttpResult> {
  return request(keyApi(gw, tenant, 'issue'), { method: 'POST', token, body });
}

/** Issues a key, asserting 201 and the shape of the answer. */
export async function issueKey(
  gw: Gateway,
  token: string,
  tenant: string,
  body: { name: string; scopes: string[]; ttlSeconds?: number },
): Promise<IssuedKey> {
  const r = await issueKeyRaw(gw, token, tenant, body);
  assert.equal(r.status, 201, `key issue ${body.name} in ${tenant}: ${r.status} ${r.text}`);
  const k = r.json as IssuedKey;
  assert.match(k.token, SUB_KEY, 'the plaintext has the documented shape');
  assert.equal(k.token.slice(36), checksumOf(k.token.slice(0, 36)), 'its checksum is the CRC-32 of the first 36 characters');
  return k;
}

export function listKeysRaw(gw: Gateway, token: string, tenant: string): Promise<HttpResult> {
  return request(keyApi(gw, tenant, 'list'), { token });
}

export async function listKeys(gw: Gateway, token: string, tenant: string): Promise<{ tenant: string; items: KeyView[] }> {
  const r = await listKeysRaw(gw, token, tenant);
  assert.equal(r.status, 200, `key list ${tenant}: ${r.status} ${r.text}`);
  return r.json;
}

export function revokeKeyRaw(gw: Gateway, token: string, tenant: string, id: string): Promise<HttpResult> {
  return request(keyApi(gw, tenant, `revoke/${encodeURIComponent(id)}`), { method: 'POST', token });
}

export function deleteKeyRaw(gw: Gateway, token: string, tenant: string, id: string): Promise<HttpResult> {
  return request(keyApi(gw, tenant, `delete/${encodeURIComponent(id)}`), { method: 'POST', token });
}

export const whoami = (gw: Gateway, token: string) => request(`${gw.adminUrl}/api/v1/sys/whoami`, { token });

/** Every unlabelled sample of the /metrics text, by name. */
export async function metrics(gw: Gateway, token: string): Promise<Record<string, number>> {
  const r = await request(`${gw.adminUrl}/metrics`, { token });
  assert.equal(r.status, 200, `metrics: ${r.status} ${r.text}`);
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  const out: Record<string, number> = {};
  for (const line of r.text.split('\n')) {
    const m = /^([a-z_]+) (\d+(?:\.\d+)?)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

export const LOOKUPS = 'switchyard_admin_key_store_lookups_total';
export const CHECKSUM_REFUSALS = 'switchyard_admin_key_checksum_refusals_total';

/** A throttle that never trips: for tests that present bad tokens on purpose. */
export const NO_THROTTLE = (c: Record<string, Json>) => {
  c.admin.authFailures = { burst: 10_000, perSecond: 1_000 };
};
