import { useEffect, useState } from 'react';

/** The view and its argument live in the URL hash (#/routes/api), so a reload keeps them. */
export interface Location {
  view: string;
  arg: string | null;
}

export function parseHash(hash: string): Location {
  const [view = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  return { view, arg: rest.length ? decodeURIComponent(rest.join('/')) : null };
}

export function go(view: string, arg?: string | null): void {
  location.hash = `#/${view}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
}

export function useHashLocation(): Location {
  const [loc, setLoc] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setLoc(parseHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return loc;
}

/** The view that lists an entity kind (cluster → clusters, orch → chains, cert → certificates). */
export const VIEW_OF_KIND: Record<string, string> = { cluster: 'clusters', route: 'routes', orch: 'chains', cert: 'certificates' };
