/**
 * DNS discovery of a cluster's targets (docs/reference.md "Clusters", DNS targets): the
 * compiler lists the names to resolve in the generation, the supervisor resolves them once
 * per node and pushes what it found to the workers (`discovery`, and init), which expand
 * each cluster's targets from it (shared/discovery-targets.ts). Plain JSON.
 */

export type DnsRecordType = 'A' | 'AAAA' | 'SRV';

/** Bounds of a name's refresh: refreshSeconds as written, or the records' TTL clamped within them. */
export const DISCOVERY_REFRESH_MIN_S = 1;
export const DISCOVERY_REFRESH_MAX_S = 300;
/** After a failed resolution the name is asked again this often (within the bounds above). */
export const DISCOVERY_RETRY_S = 5;
/** Addresses one DNS target may add to a cluster, the first in address-order.ts's order after the upstream policy: the rest are not used. */
export const DISCOVERY_MAX_ADDRESSES = 64;
/** `{dns}` targets one cluster, and one tenant's clusters together, may write (a compile issue past them). */
export const DISCOVERY_MAX_TARGETS_PER_CLUSTER = 16;
export const DISCOVERY_MAX_TARGETS_PER_TENANT = 64;

/** A cluster target written `{dns, …}`, as the compiled cluster carries it. */
export interface DiscoveryTarget {
  /** The DiscoverySource's id whose set this target expands to. */
  source: string;
  name: string;
  type: DnsRecordType;
  refreshSeconds?: number;
  /** http (plain) or https (TLS, the certificate checked against the name unless tls.serverName says otherwise). */
  scheme: 'http' | 'https';
  /** A/AAAA: the port of every address; SRV: absent (each record gives its own). */
  port?: number;
  /** A/AAAA: the weight of every address; SRV: absent (each record's weight). */
  weight?: number;
}

/** One name the supervisor resolves, as the compiler lists it (`discoverySources`). */
export interface DiscoverySource {
  /** `tenant/cluster|TYPE|name|port`: what workers and the supervisor name it by. */
  id: string;
  tenant: string;
  /** The cluster's name (without the tenant). */
  cluster: string;
  name: string;
  type: DnsRecordType;
  /** A/AAAA: the port the addresses are checked against the upstream policy with. */
  port?: number;
  /** Absent: the records' TTL, clamped to [DISCOVERY_REFRESH_MIN_S, DISCOVERY_REFRESH_MAX_S]. */
  refreshSeconds?: number;
}

/** One resolved address: `host:port` (IPv6 in brackets) with its SRV weight and priority (A/AAAA: absent). */
export interface DiscoveredAddress {
  hostPort: string;
  weight?: number;
  priority?: number;
}

/**
 * A name's state: `pending` (never resolved: the cluster has no address from it yet),
 * `ok`, `fail-static` (the last resolution failed: the last good set still serves).
 */
export type DiscoveryState = 'pending' | 'ok' | 'fail-static';

/** What a worker holds of a source: the addresses to use (already through the upstream policy). */
export interface DiscoverySet {
  id: string;
  /** Supervisor-wide, increasing: a worker keeps the newest it was sent. */
  version: number;
  addresses: DiscoveredAddress[];
}

/** A name's last resolution, as `cluster health` shows it. */
export interface DiscoveryStatus {
  name: string;
  type: DnsRecordType;
  port: number | null;
  state: DiscoveryState;
  /** ISO time of the last resolution attempt (null: none yet). */
  lastResolvedAt: string | null;
  /** `ok`, or the class of the failure: `not-found`, `timeout`, `refused` (by the DNS server), `error`. */
  lastResult: string | null;
  /** The addresses in use (`host:port`). */
  addresses: string[];
  /** How many addresses the upstream policy refused, by rule (the addresses are in the node log only). */
  refused: { rule: string; count: number }[];
  /** ISO time of the next resolution. */
  nextAt: string | null;
}

export const discoverySourceId = (clusterKey: string, type: DnsRecordType, name: string, port: number | undefined): string => `${clusterKey}|${type}|${name.toLowerCase()}|${port ?? ''}`;
