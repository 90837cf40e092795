import { errors } from 'undici';

/**
 * undici refused the request before sending it (its argument checks: a header value, the
 * path or the method holds a byte HTTP does not allow). The client's bytes are at fault,
 * not the upstream, and no connection was used.
 */
export function refusedBeforeSending(err: unknown): boolean {
  return err instanceof errors.InvalidArgumentError;
}
