import type { HeldWrites } from './held-writes.js';
import type { PeerIdentities } from './peer-identity.js';

/** What every downstream of one engine reads: its drain state, its own stream resets, its held writes. */
export interface DownstreamContext {
  /** The engine stopped accepting: HTTP/1.1 answers ask the client to close. */
  draining(): boolean;
  /** h2 streams the gateway reset itself: not the client's resets (rapid-reset count). */
  readonly ownResets: WeakSet<object>;
  /** How often a held write's progress is read (node has no event per flushed write). */
  readonly progressPollMs: number;
  /** The held writes whose progress feeds their send-stall watch, read every progressPollMs. */
  readonly heldWrites: HeldWrites;
  /** The verified client certificate of each TLS connection, read once when first asked. */
  readonly identities: PeerIdentities;
}

/** The socket peer as text; an IPv4-mapped IPv6 address as plain IPv4. */
export function peerAddress(address: string | undefined): string {
  if (address === undefined) return '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
