import type { Dispatcher } from 'undici';

/** What an HTTP/2 session (h2-session.ts) tells the target pool it belongs to (h2-target-pool.ts). */
export interface SessionOwner {
  /** A stream slot freed up, the peer allowed more streams, or the session stopped taking new ones: waiting requests may go. */
  roomMade(): void;
  /** A session is gone (its `over` is true): closed, or never connected (`connectError`). */
  ended(connectError: Error | null): void;
  /** A request the session took while it connected, beyond what the peer's SETTINGS then allowed: it goes elsewhere. */
  handBack(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
}
