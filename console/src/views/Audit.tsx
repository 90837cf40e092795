import { useEffect, useState } from 'react';
import { api, tpath } from '../api';
import { ErrorBox, Table, Section, when } from '../components';

interface Entry {
  id: number;
  at: string;
  identity: { id: string; kind: string };
  operation: string;
  target: string | null;
  status: number;
  traceId: string;
  generation: number | null;
}

export function Audit({ tenant }: { tenant: string }) {
  const [items, setItems] = useState<Entry[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async (before: number | null) => {
    try {
      const r = await api<{ items: Entry[]; next: number | null }>('GET', tpath(tenant, `audit/list?limit=50${before ? `&before=${before}` : ''}`));
      setItems((old) => (before ? [...old, ...r.items] : r.items));
      setNext(r.next);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => void load(null), [tenant]);
  return (
    <Section title={`Audit trail of ${tenant}`} actions={<button onClick={() => load(null)}>Refresh</button>}>
      <ErrorBox error={error} />
      <Table data-testid="audit-list" head={['When', 'Who', 'Operation', 'Target', 'Status', 'Generation', 'Trace']}>
          {items.map((e) => (
            <tr key={e.id}>
              <td>{when(e.at)}</td>
              <td>
                {e.identity.id} ({e.identity.kind})
              </td>
              <td>{e.operation}</td>
              <td>{e.target ?? '—'}</td>
              <td>{e.status}</td>
              <td>{e.generation ?? '—'}</td>
              <td>
                <code>{e.traceId}</code>
              </td>
            </tr>
          ))}
        </Table>
      {next !== null && <button onClick={() => load(next)}>Older entries</button>}
    </Section>
  );
}
