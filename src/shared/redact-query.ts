/** What a redacted value is written as, in every log. */
export const REDACTED = '[redacted]';

/**
 * The query with the values of the parameters `secret` names replaced by `[redacted]`; the
 * rest as sent. A name is judged percent-decoded (`+` as a space), so `api%5Fkey` is `api_key`.
 */
export function redactQuery(query: string, secret: (name: string) => boolean): string {
  // `;` separates pairs too for many servers (Rack, older Python and Go): each run between
  // separators is judged, and the separators stay as sent.
  return query.replace(/[^&;]+/g, (pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // an undecodable name is judged as written
    }
    return secret(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
  });
}
