import { Client } from 'undici';
import type { KeySourceSpec } from '../../contracts/key-sets.js';
import type { UpstreamGuard } from '../../shared/upstream-guard.js';
import { readCapped } from '../../steps/capped-body.js';
import { usableKeys } from '../../steps/identity/public-jwk.js';
import type { CachingHeaders } from './cache-lifetime.js';
import { shownUrl } from '../../shared/shown-url.js';

/** A discovery document or JWKS larger than this is refused (a real one is a few KiB). */
const MAX_DOCUMENT_BYTES = 256 * 1024;
const CONNECT_MS = 3_000;
const ANSWER_MS = 5_000;

export interface FetchedKeySet {
  keys: Record<string, unknown>[];
  caching: CachingHeaders;
}

/**
 * One fetch of a source's keys: for an issuer, its discovery document first
 * (`<issuer>/.well-known/openid-configuration`, whose `issuer` must be the configured one),
 * then the JWKS it names. Every connection goes through the tenant's upstream policy, the
 * `jwks_uri` discovery returned included; redirects are not followed (their target would
 * escape it).
 */
export async function fetchKeySet(spec: KeySourceSpec, guard: UpstreamGuard): Promise<FetchedKeySet> {
  let jwksUri = spec.url;
  if (spec.kind === 'issuer') {
    const discovery = (await getJson(spec.tenant, `${spec.url.replace(/\/+$/, '')}/.well-known/openid-configuration`, guard)).body as Record<string, unknown> | null;
    if (discovery?.issuer !== spec.url) throw new Error(`discovery: issuer ${JSON.stringify(discovery?.issuer)} is not ${shownUrl(spec.url)}`);
    if (typeof discovery.jwks_uri !== 'string' || !/^https?:\/\//.test(discovery.jwks_uri)) throw new Error('discovery: no http(s) jwks_uri');
    jwksUri = discovery.jwks_uri;
  }
  const answer = await getJson(spec.tenant, jwksUri, guard);
  return { keys: usableKeys(answer.body), caching: answer.caching };
}

async function getJson(tenant: string, url: string, guard: UpstreamGuard): Promise<{ body: unknown; caching: CachingHeaders }> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${shownUrl(url)}: not an http(s) URL`);
  const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
  // A client per fetch: a source is fetched minutes apart, and a pool kept would outlive its tenant's policy.
  const client = new Client(u.origin, { connect: guard.connect(tenant, `${u.hostname}:${port}`, { timeout: CONNECT_MS }), headersTimeout: ANSWER_MS, bodyTimeout: ANSWER_MS });
  try {
    const res = await client.request({ method: 'GET', path: `${u.pathname}${u.search}`, headers: { accept: 'application/json' } });
    const text = (await readCapped(res.body, MAX_DOCUMENT_BYTES, shownUrl(url))).toString('utf8');
    if (res.statusCode !== 200) throw new Error(`${shownUrl(url)}: HTTP ${res.statusCode}`);
    const h = res.headers;
    const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);
    return { body: JSON.parse(text), caching: { cacheControl: one(h['cache-control']), expires: one(h.expires), date: one(h.date), age: one(h.age) } };
  } finally {
    void client.close().catch(() => {});
  }
}
