import { useState, type FormEvent } from 'react';
import { api, seg, tpath } from '../api';
import { ErrorBox, Table, Section, useLoad, when } from '../components';
import { Gate, GatedButton } from '../gate';

interface KeyView {
  id: string;
  name: string;
  scopes: string[];
  state: string;
  issuer: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** Tenant sub-keys. The plaintext of a new key lives in this component's state only: shown once. */
export function Keys({ tenant }: { tenant: string }) {
  const list = useLoad(() => api<{ items: KeyView[] }>('GET', tpath(tenant, 'key/list')), [tenant]);
  const [issued, setIssued] = useState<{ id: string; token: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [copied, setCopied] = useState(false);

  const issue = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setError(null);
    setIssued(null);
    setCopied(false);
    const form = e.currentTarget; // React clears currentTarget once the handler awaits
    const f = new FormData(form);
    const ttl = String(f.get('ttl') ?? '').trim();
    const body = {
      name: String(f.get('name') ?? '').trim(),
      scopes: String(f.get('scopes') ?? '').split(/[\s,]+/).filter(Boolean),
      ...(ttl ? { ttlSeconds: Number(ttl) } : {}),
    };
    try {
      const r = await api<{ id: string; token: string }>('POST', tpath(tenant, 'key/issue'), body);
      setIssued({ id: r.id, token: r.token });
      list.reload();
      form.reset(); // the next key starts from empty fields
    } catch (err) {
      setError(err);
    }
  };
  const act = async (verb: 'revoke' | 'delete', id: string) => {
    setError(null);
    try {
      await api('POST', tpath(tenant, `key/${verb}/${seg(id)}`), {});
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <Gate feature="key.issue">
        {(disabled) => (
          <Section title="Issue a key">
            <form onSubmit={issue} className="stack" aria-label="Issue a key">
              <label htmlFor="key-name">Name</label>
              <input id="key-name" name="name" required disabled={disabled} data-testid="key-name" />
              <label htmlFor="key-scopes">Scopes (space or comma separated; at most your own)</label>
              <input id="key-scopes" name="scopes" required disabled={disabled} data-testid="key-scopes" />
              <label htmlFor="key-ttl">Lifetime in seconds (empty: no expiry)</label>
              <input id="key-ttl" name="ttl" inputMode="numeric" disabled={disabled} data-testid="key-ttl" />
              <button type="submit" disabled={disabled} data-testid="key-issue">
                Issue
              </button>
            </form>
            <ErrorBox error={error} testId="key-error" />
            {issued && (
              <div className="secret" role="status" data-testid="key-issued">
                <p>
                  Key <code>{issued.id}</code> issued. Copy the token now: it is shown this once and cannot be shown again.
                </p>
                <code data-testid="key-plaintext">{issued.token}</code>
                <button
                  onClick={() => {
                    void navigator.clipboard?.writeText(issued.token).then(() => setCopied(true));
                  }}
                  data-testid="key-copy"
                >
                  {copied ? 'Copied' : 'Copy'}
                </button>
                <button onClick={() => setIssued(null)}>Done</button>
              </div>
            )}
          </Section>
        )}
      </Gate>
      <Section title={`Keys of ${tenant}`} actions={<button onClick={list.reload}>Refresh</button>}>
        <ErrorBox error={list.error} />
        <Table data-testid="key-list" head={['Id', 'Name', 'Scopes', 'State', 'Expires', 'Last used', '']}>
            {(list.data?.items ?? []).map((k) => (
              <tr key={k.id} data-testid={`key-row-${k.id}`}>
                <td>
                  <code>{k.id}</code>
                </td>
                <td>{k.name}</td>
                <td>{k.scopes.join(' ')}</td>
                <td>{k.state}</td>
                <td>{when(k.expiresAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td>
                  <GatedButton feature="key.revoke" onClick={() => act('revoke', k.id)} disabled={k.state !== 'active'}>
                    Revoke
                  </GatedButton>
                  <GatedButton feature="key.delete" onClick={() => act('delete', k.id)}>
                    Delete
                  </GatedButton>
                </td>
              </tr>
            ))}
          </Table>
      </Section>
    </>
  );
}
