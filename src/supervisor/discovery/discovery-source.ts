import type { DiscoveredAddress, DiscoverySource } from '../../contracts/discovery.js';
import type { DnsName } from './dns-name.js';

/** One `{dns}` target of a cluster (a source): its name's answer as this cluster's port and the upstream policy make it. */
export interface Source {
  spec: DiscoverySource;
  name: DnsName;
  /** What the workers use: the name's last good answer, the addresses the upstream policy allowed, capped. */
  addresses: DiscoveredAddress[];
  refused: { address: string; rule: string }[];
  /** 0: never derived. */
  version: number;
}
