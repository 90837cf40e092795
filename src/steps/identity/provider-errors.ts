import * as client from 'openid-client';
import { errorType } from '../step.js';

/** oauth4webapi's codes for a callback or an answer that failed its checks (state, nonce, issuer, expiry, a missing code). */
const CHECK_FAILED = new Set<string>(['OAUTH_JWT_CLAIM_COMPARISON_FAILED', 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED', 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED', 'OAUTH_INVALID_RESPONSE']);

/**
 * The provider answered and said no (invalid_grant, an error in the authorization
 * response), or its answer failed the checks: the sign-in is refused (401). Anything else
 * (no connection, a timeout, a 5xx, an answer that is not JSON) means it is unavailable (503).
 */
export function providerRefused(err: unknown): boolean {
  if (err instanceof client.AuthorizationResponseError) return true;
  if (err instanceof client.ResponseBodyError) return err.status < 500;
  const code = (err as { code?: unknown }).code;
  return err instanceof client.ClientError && typeof code === 'string' && CHECK_FAILED.has(code);
}

/** What failed, for the log: the innermost code (ECONNREFUSED under openid-client's wrapping), else the error's name. */
export function failureOf(err: unknown): string {
  let e = err as { code?: unknown; name?: unknown; cause?: unknown } | null;
  let found: string | null = null;
  for (let depth = 0; e && depth < 5; depth++, e = e.cause as typeof e) {
    if (typeof e.code === 'string') found = e.code;
  }
  return found ?? errorType(err);
}
