import { useState } from 'react';
import { api, seg, tpath, type StepInfo } from '../api';
import { ErrorBox, Table, Section, useLoad } from '../components';
import { GatedButton } from '../gate';

export function Plugins({ tenant }: { tenant: string }) {
  const list = useLoad(() => api<{ items: StepInfo[] }>('GET', tpath(tenant, 'plugin/list')), [tenant]);
  const [error, setError] = useState<unknown>(null);
  const toggle = async (code: string, enable: boolean) => {
    setError(null);
    try {
      await api('POST', tpath(tenant, `plugin/${enable ? 'enable' : 'disable'}/${seg(code)}`), {});
      list.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Section title={`Plugins of ${tenant}`}>
      <p className="hint">A disabled step used by a route or chain fails the next dry-run and publish; what is serving keeps serving.</p>
      <ErrorBox error={error || list.error} />
      <Table data-testid="plugin-list" head={['Step', 'What it does', 'State', '']}>
          {(list.data?.items ?? []).map((s) => (
            <tr key={s.code}>
              <td>
                <code>{s.code}</code>
              </td>
              <td>
                {s.summary}
                {s.package && <span className="hint" data-testid={`plugin-package-${s.code}`}> (package {s.package} {s.version})</span>}
              </td>
              <td data-testid={`plugin-state-${s.code}`}>{s.enabled ? 'enabled' : 'disabled'}</td>
              <td>
                <GatedButton feature="plugin.toggle" onClick={() => toggle(s.code, !s.enabled)} data-testid={`plugin-toggle-${s.code}`}>
                  {s.enabled ? 'Disable' : 'Enable'}
                </GatedButton>
              </td>
            </tr>
          ))}
        </Table>
    </Section>
  );
}
