import { createHash } from 'node:crypto';

/**
 * A key source's URL as metric labels and log lines show it: without its query, fragment or
 * userinfo, which may carry a token or a password. The rest is left as written (a label
 * must stay the URL the tenant configured, not a normalised form).
 */
export function shownUrl(url: string): string {
  const cut = url.search(/[?#]/);
  const bare = cut < 0 ? url : url.slice(0, cut);
  return bare.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/]*@/, '$1');
}

/**
 * A source as its `source` metric label and log field name it: the shown URL, plus `#` and
 * 8 hex digits of the full URL's SHA-256 when the cut removed something, so two sources that
 * differ only by query (Azure AD B2C's `?p=B2C_1_…`) keep distinct series.
 */
export function sourceLabel(url: string): string {
  const shown = shownUrl(url);
  return shown === url ? shown : `${shown}#${createHash('sha256').update(url).digest('hex').slice(0, 8)}`;
}
