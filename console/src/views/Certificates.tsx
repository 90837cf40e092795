import { useState } from 'react';
import { api, seg, tpath, type CertDocView, type CertView, type EntityListItem } from '../api';
import { ErrorBox, Section, Table, useLoad } from '../components';
import { Gate } from '../gate';
import { go } from '../hash-route';
import { CertificateDetail } from './CertificateDetail';
import { Expiry, servedHosts } from './CertFacts';

interface CertRow extends EntityListItem {
  /** The draft if there is one, else the published document; null when it could not be read. */
  doc: CertDocView | null;
}

/** The list carries no certificate details: one `config get` each adds hosts and expiry (a tenant has a handful). */
async function loadRows(tenant: string): Promise<CertRow[]> {
  const { items } = await api<{ items: EntityListItem[] }>('GET', tpath(tenant, 'config/list/cert'));
  return Promise.all(
    items.map(async (e) => {
      const doc = await api<CertView>('GET', tpath(tenant, `config/get/cert/${seg(e.name)}`)).then(
        (v) => v.draft?.doc ?? v.published?.doc ?? null,
        () => null, // removed meanwhile: the row still shows what the list said
      );
      return { ...e, doc };
    }),
  );
}

/** The tenant's TLS certificates (`cert` entities): state, hosts, expiry; select one for its details and to replace it. */
export function Certificates({ tenant, selected }: { tenant: string; selected: string | null }) {
  const list = useLoad(() => loadRows(tenant), [tenant]);
  const [newName, setNewName] = useState('');
  return (
    <>
      <Section title="Certificates" actions={<button onClick={list.reload}>Refresh</button>}>
        <ErrorBox error={list.error} />
        <Table data-testid="cert-list" head={['Name', 'State', 'Pending', 'Published in', 'Hosts', 'Not after']}>
          {(list.data ?? []).map((c) => (
            <tr key={c.name} className={c.name === selected ? 'selected' : undefined} data-testid={`cert-row-${c.name}`}>
              <td>
                <a href={`#/certificates/${encodeURIComponent(c.name)}`} data-testid={`cert-link-${c.name}`}>
                  {c.name}
                </a>
              </td>
              <td>{c.state}</td>
              <td>{c.pending ?? '—'}</td>
              <td>{c.publishedGeneration ?? '—'}</td>
              <td>{servedHosts(c.doc).join(', ') || '—'}</td>
              <td>{c.doc?.info ? <Expiry notAfter={c.doc.info.notAfter} /> : '—'}</td>
            </tr>
          ))}
        </Table>
        {list.data?.length === 0 && <p className="hint">No certificates yet.</p>}
        <Gate feature="config.set">
          {(disabled) => (
            <form
              className="inline"
              onSubmit={(e) => {
                e.preventDefault();
                if (newName.trim()) go('certificates', newName.trim());
              }}
            >
              <label htmlFor="new-cert">New certificate name</label>
              <input id="new-cert" value={newName} onChange={(e) => setNewName(e.target.value)} disabled={disabled} data-testid="new-cert-name" />
              <button type="submit" disabled={disabled} data-testid="new-cert">
                New
              </button>
            </form>
          )}
        </Gate>
      </Section>
      {selected && <CertificateDetail key={selected} tenant={tenant} name={selected} onChange={list.reload} />}
    </>
  );
}
