import { AuthorizationResponseError, ResponseBodyError } from 'openid-client';
import { SvcError } from '../../shared/errors.js';

/** A failure to talk to the provider at all: no connection, a timeout, a fetch that never answered. */
function unreachable(err: unknown): boolean {
  const name = (err as Error | null)?.name;
  return err instanceof TypeError || name === 'TimeoutError' || name === 'AbortError';
}

/**
 * What an openid-client failure means to the operator signing in: the provider cannot be
 * reached or answered 5xx (503 ProviderUnavailable), or the sign-in itself failed (401
 * SignInFailed: refused at the provider, a state or nonce that does not match, a bad code).
 * `issuer` is set for discovery: any failure there leaves the provider unusable (503).
 * Messages name the provider's error codes, never a code, a token or a cookie.
 */
export function providerError(err: unknown, issuer?: string): SvcError {
  if (err instanceof SvcError) return err;
  if (err instanceof AuthorizationResponseError) return new SvcError('Svc.Auth.SignInFailed', `The provider ended the sign-in: ${err.error}`);
  if (err instanceof ResponseBodyError && err.status < 500) return new SvcError('Svc.Auth.SignInFailed', `The provider refused the sign-in: ${err.error}`);
  if (err instanceof ResponseBodyError || unreachable(err) || issuer !== undefined) {
    const where = issuer === undefined ? 'The OpenID provider' : `The OpenID provider ${issuer}`;
    return new SvcError('Svc.Auth.ProviderUnavailable', `${where} cannot be reached or did not answer as one (${(err as Error).message}); try again later`);
  }
  return new SvcError('Svc.Auth.SignInFailed', `The sign-in did not check out: ${(err as Error).message}`);
}
