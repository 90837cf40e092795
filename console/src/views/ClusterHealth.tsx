import { useEffect } from 'react';
import { api, seg, tpath } from '../api';
import { ErrorBox, Section, Table, useLoad, when } from '../components';
import type { CompiledHealthCheck } from '../../../src/contracts/generation';
import type { DiscoveryStatus } from '../../../src/contracts/discovery';

/** How often the table asks again while it is on screen: a few probe intervals at most. */
const REFRESH_MS = 2_000;

/** One target as GET /api/v1/{tenant}/clusters/{name}/health answers it. */
interface TargetHealth {
  target: string;
  state: 'healthy' | 'unhealthy' | 'unchecked';
  successes: number;
  failures: number;
  lastCheckedAt: string | null;
  ejectedUntil: string | null;
  /** Requests in flight at the target, summed over the node's workers; absent from servers that do not report it. */
  inFlight?: number;
  /** An address a DNS name gave, with its weight and SRV priority. */
  discovered?: boolean;
  weight?: number;
  priority?: number;
}

interface ClusterHealthAnswer {
  tenant: string;
  cluster: string;
  healthCheck: CompiledHealthCheck | null;
  outlier: { consecutiveFailures: number; ejectMs: number } | null;
  targets: TargetHealth[];
  /** The cluster's DNS names and their last resolution (absent: no `{dns}` target). */
  dns?: DiscoveryStatus[];
}

/**
 * A published cluster's targets as the node's health checks and outlier ejection see
 * them, asked again every REFRESH_MS while shown. A cluster not published gets the
 * server's error in place of the table. Shown only where the server's answer allows the
 * read (feature `cluster.health`, see Entities).
 */
export function ClusterHealth({ tenant, name }: { tenant: string; name: string }) {
  const health = useLoad(() => api<ClusterHealthAnswer>('GET', tpath(tenant, `clusters/${seg(name)}/health`)), [tenant, name]);
  const { reload } = health;
  useEffect(() => {
    // A background tab asks nothing; the next tick after it is shown again catches up.
    const timer = setInterval(() => document.hidden || reload(), REFRESH_MS);
    return () => clearInterval(timer);
    // reload only bumps a counter: any render's copy does the same.
  }, [tenant, name]);

  const h = health.data;
  return (
    <Section
      title="Health"
      actions={
        <button onClick={reload} data-testid="health-refresh">
          Refresh
        </button>
      }
    >
      <ErrorBox error={health.error} testId="health-error" />
      {h && !health.error && (
        <>
          <p className="hint" data-testid="health-check">
            {checkSummary(h.healthCheck)}
            {h.outlier && ` Outlier ejection after ${h.outlier.consecutiveFailures} failures in a row, for ${h.outlier.ejectMs} ms.`}
          </p>
          <Table data-testid="health-list" head={['Target', 'State', 'Last check', 'Successes / Failures', 'In flight']}>
            {h.targets.map((t) => (
              <tr key={t.target} data-testid={`health-row-${t.target}`}>
                <td>
                  <code>{t.target}</code>
                  {t.discovered && ` (DNS, weight ${t.weight ?? 1}${t.priority ? `, priority ${t.priority}` : ''})`}
                </td>
                <td className={`state-${t.state}`} data-testid={`health-state-${t.target}`}>
                  {t.state}
                  {t.ejectedUntil && `, ejected until ${when(t.ejectedUntil)}`}
                </td>
                <td data-testid={`health-checked-${t.target}`}>{when(t.lastCheckedAt)}</td>
                <td data-testid={`health-counts-${t.target}`}>
                  {t.successes} / {t.failures}
                </td>
                <td data-testid={`health-inflight-${t.target}`}>{typeof t.inFlight === 'number' ? t.inFlight : '—'}</td>
              </tr>
            ))}
          </Table>
          {h.dns && h.dns.length > 0 && (
            <Table data-testid="health-dns" head={['Name', 'State', 'Last resolution', 'Result', 'Addresses', 'Refused']}>
              {h.dns.map((d) => (
                <tr key={`${d.type} ${d.name} ${d.port ?? ''}`} data-testid={`health-dns-${d.name}`}>
                  <td>
                    <code>{d.name}</code> {d.type}
                    {d.port !== null && ` :${d.port}`}
                  </td>
                  <td className={d.state === 'ok' ? 'state-healthy' : 'state-unhealthy'} data-testid={`health-dns-state-${d.name}`}>
                    {d.state === 'fail-static' ? 'fail static (last addresses serve)' : d.state}
                  </td>
                  <td>{when(d.lastResolvedAt)}</td>
                  <td>{d.lastResult ?? '—'}</td>
                  <td>{d.addresses.join(', ') || '—'}</td>
                  <td>{d.refused.map((r) => `${r.count} (${r.rule})`).join(', ') || '—'}</td>
                </tr>
              ))}
            </Table>
          )}
        </>
      )}
    </Section>
  );
}

function checkSummary(c: CompiledHealthCheck | null): string {
  if (!c) return 'No health check: targets are unchecked and stay in rotation unless ejected.';
  return `GET ${c.path} every ${c.intervalMs} ms; out after ${c.unhealthyThreshold} failures in a row, back after ${c.healthyThreshold} successes.`;
}
