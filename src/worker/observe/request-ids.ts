import type { ObserveSettings } from '../../contracts/ipc.js';
import { WELL_FORMED_REQUEST_ID } from '../../shared/trace-id.js';
import type { TrustedProxies } from '../trusted-proxies.js';
import type { Downstream, RequestHead } from '../engine/contract.js';

/**
 * Every request's id (worker.json `requestId`): an incoming one when it is well formed and
 * `trustIncoming` allows it (always, or from a trusted proxy only), else a new one. The
 * id goes upstream and back to the client in the same header, and is every error
 * envelope's `traceId`.
 */
export class RequestIds {
  readonly header: string;
  private readonly trust: 'never' | 'trusted-proxies' | 'always';

  constructor(
    settings: NonNullable<ObserveSettings['requestId']>,
    private readonly proxies: TrustedProxies,
    private readonly next: () => string,
  ) {
    this.header = settings.header;
    this.trust = settings.trustIncoming;
  }

  /** From the engine's request head, valid only during its callback. */
  assign(req: RequestHead, down: Downstream): string {
    if (this.trust !== 'never') {
      const incoming = req.getHeader(this.header);
      if (incoming !== '' && WELL_FORMED_REQUEST_ID.test(incoming) && (this.trust === 'always' || this.proxies.trusts(down.remoteAddress()))) {
        return incoming;
      }
    }
    return this.next();
  }

  /** The header echoed on every head: `[header, id]`. */
  echo(id: string): readonly [string, string] {
    return [this.header, id];
  }
}
