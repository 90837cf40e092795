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
