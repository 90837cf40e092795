import type { DiscoveredAddress } from '../../contracts/discovery.js';

/**
 * Resolved sets compared (pure): whether an answer changes what the workers use, and what
 * it adds and removes, for the log line. Order does not count (a DNS server may rotate its
 * records each answer; that is no change).
 */

const keyOf = (a: DiscoveredAddress): string => `${a.hostPort}/${a.weight ?? ''}/${a.priority ?? ''}`;

/** The set in one order (by address), so equal sets are equal arrays and the workers' targets keep their order. */
export function sortedAddresses(set: readonly DiscoveredAddress[]): DiscoveredAddress[] {
  return [...set].sort((a, b) => (a.hostPort < b.hostPort ? -1 : a.hostPort > b.hostPort ? 1 : (a.priority ?? 0) - (b.priority ?? 0)));
}

export function sameAddresses(a: readonly DiscoveredAddress[], b: readonly DiscoveredAddress[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(keyOf));
  return b.every((x) => keys.has(keyOf(x)));
}

/** The addresses (`host:port`) `after` has and `before` had not, and the other way round. */
export function addressDiff(before: readonly DiscoveredAddress[], after: readonly DiscoveredAddress[]): { added: string[]; removed: string[] } {
  const was = new Set(before.map((a) => a.hostPort));
  const now = new Set(after.map((a) => a.hostPort));
  return { added: [...now].filter((x) => !was.has(x)), removed: [...was].filter((x) => !now.has(x)) };
}
