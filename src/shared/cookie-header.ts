import { parseCookie, type Cookies } from 'cookie';

/**
 * The cookies of a request's Cookie header lines (RFC 6265 §5.4, by the `cookie` package):
 * the first of a repeated name wins, values percent-decoded where they decode. Several
 * lines (HTTP/2 splits cookies so) are one list joined by `; ` (RFC 9113 §8.2.3).
 */
export function parseCookies(lines: readonly string[]): Cookies {
  return parseCookie(lines.length === 1 ? lines[0]! : lines.join('; '));
}
