import type { CompileIssue } from '../contracts/generation.js';
import { checkLiteral, type UpstreamCheck } from '../shared/upstream-policy.js';
import { urlHostPort } from '../shared/host-port.js';
import { targetParts } from '../shared/target-url.js';

/**
 * Compile-time half of the upstream policy: targets and service URLs written as IP
 * addresses. Host names are checked by workers against what they resolve to.
 */
export function deniedTargets(cluster: string, targets: readonly { address: string; index: number }[], check: UpstreamCheck, issues: CompileIssue[]): void {
  for (const { address: t, index } of targets) {
    const { host, port } = urlHostPort(targetParts(t).hostPort);
    const rule = checkLiteral(check, host, port);
    if (rule) issues.push({ kind: 'cluster', name: cluster, pointer: `/targets/${index}`, code: 'Compile.Cluster.TargetDenied', message: `target ${t} is refused: ${rule}` });
  }
}

/** The rule refusing an http(s) URL's literal address, or null. */
export function deniedUrl(url: string, check: UpstreamCheck): string | null {
  const u = new URL(url);
  const { host, port } = urlHostPort(u.host);
  return checkLiteral(check, host, u.port === '' && u.protocol === 'https:' ? 443 : port);
}
