import type { Target } from './data-server.js';
import type { Exchange } from './exchange.js';
import { staticReply } from './response-head.js';
import { bracketed, splitHostPort } from '../shared/host-port.js';

/** A route with `tls: "required"`: its target over TLS, a 308 to https on the plain port. */
export class HttpsOnly {
  constructor(
    readonly target: Target,
    readonly redirect: Target,
  ) {}
}

/**
 * The 308 to the same host, path and query on https. `tlsPort` is the gateway's TLS port
 * (null: none here, so TLS is terminated in front of it and https means port 443).
 */
export function httpsRedirect(tlsPort: number | null): (ex: Exchange) => void {
  const portSuffix = tlsPort === null || tlsPort === 443 ? '' : `:${tlsPort}`;
  return (ex: Exchange) => {
    // Host was checked when the request came in (no CR, LF or space); its port is the plain one.
    const given = ex.header('host') ?? '';
    const hp = splitHostPort(given);
    const host = hp === null ? given : bracketed(hp.host);
    const location = `https://${host}${portSuffix}${ex.path}${ex.query === null ? '' : `?${ex.query}`}`;
    ex.sendStatic(staticReply(308, '', { location, 'content-type': 'text/plain; charset=utf-8' }));
  };
}
