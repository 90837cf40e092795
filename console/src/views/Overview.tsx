import { useState } from 'react';
import { api, tpath } from '../api';
import { ErrorBox, Table, Section, useLoad, when } from '../components';
import { Gate } from '../gate';

interface Status {
  supervisor: { pid: number; uptimeSeconds: number; version: string };
  generation: number;
  volume: string;
  workers: {
    slot: number;
    pid: number | null;
    state: string;
    generation: number;
    restarts: number;
    /** Absent when the worker did not answer in time (or is not listening). */
    connections?: number;
    generations?: { generation: number; inFlight: number }[];
  }[];
}

export function Overview({ tenant }: { tenant: string }) {
  const status = useLoad(() => api<Status>('GET', '/api/v1/sys/cluster/status'), []);
  const [refreshed, setRefreshed] = useState(0);

  const s = status.data;
  return (
    <>
      <Section title="Overview" actions={<button onClick={() => (status.reload(), setRefreshed((n) => n + 1))}>Refresh</button>}>
        <ErrorBox error={status.error} />
        {s && (
          <dl className="facts">
            <dt>Current generation</dt>
            <dd data-testid="current-generation">{s.generation}</dd>
            <dt>Volume</dt>
            <dd>{s.volume}</dd>
            <dt>Supervisor</dt>
            <dd>
              pid {s.supervisor.pid}, up {s.supervisor.uptimeSeconds} s, version {s.supervisor.version}
            </dd>
          </dl>
        )}
      </Section>
      <Section title="Workers">
        {s && (
          <Table data-testid="workers" head={['Slot', 'PID', 'State', 'Generation', 'Restarts', 'Connections', 'Serving (in flight)']}>
              {s.workers.map((w) => (
                <tr key={w.slot}>
                  <td>{w.slot}</td>
                  <td>{w.pid ?? '—'}</td>
                  <td>{w.state}</td>
                  <td>{w.generation}</td>
                  <td>{w.restarts}</td>
                  <td data-testid={`worker-connections-${w.slot}`}>{w.connections ?? '—'}</td>
                  <td data-testid={`worker-generations-${w.slot}`}>
                    {w.generations?.map((g) => `${g.generation} (${g.inFlight})`).join(', ') ?? '—'}
                  </td>
                </tr>
              ))}
            </Table>
        )}
      </Section>
      {/* The publish history is a read of its own: an identity may see the overview without it. */}
      <Gate feature="overview.history">{(off) => !off && <LastPublishes tenant={tenant} refreshed={refreshed} />}</Gate>
    </>
  );
}

function LastPublishes({ tenant, refreshed }: { tenant: string; refreshed: number }) {
  const history = useLoad(() => api<{ items: { generation: number; action: string; planned: string[]; createdAt: string }[] }>('GET', tpath(tenant, 'publish/history?limit=5')), [tenant, refreshed]);
  return (
    <Section title={`Last publishes of ${tenant}`}>
      <ErrorBox error={history.error} />
      <ul className="plain">
        {(history.data?.items ?? []).map((h) => (
          <li key={h.generation}>
            Generation <strong>{h.generation}</strong> ({h.action}, {when(h.createdAt)}): {h.planned.join(', ') || 'no changes'}
          </li>
        ))}
        {history.data && history.data.items.length === 0 && <li>Nothing published yet.</li>}
      </ul>
    </Section>
  );
}
