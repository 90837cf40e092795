/**
 * A cluster target as written: `host:port` or `http://host:port` (plain HTTP), or
 * `https://host:port` (TLS). The string as written stays the target's name everywhere a
 * target is keyed (health tables, outlier ejection, hash balancing, cluster health); this
 * is where its scheme and address are read from it.
 */
export interface TargetParts {
  secure: boolean;
  /** `host:port` (IPv6 in brackets): what the upstream policy checks and a health probe's default Host. */
  hostPort: string;
  /** The origin undici connects to. */
  origin: string;
}

export function targetParts(target: string): TargetParts {
  if (target.startsWith('https://')) {
    const hostPort = target.slice('https://'.length);
    return { secure: true, hostPort, origin: target };
  }
  const hostPort = target.startsWith('http://') ? target.slice('http://'.length) : target;
  return { secure: false, hostPort, origin: `http://${hostPort}` };
}

/** Whether any of `targets` is reached over TLS. */
export function anySecure(targets: readonly string[]): boolean {
  return targets.some((t) => targetParts(t).secure);
}
