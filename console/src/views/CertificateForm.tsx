import { useState, type FormEvent } from 'react';
import { api, seg, tpath, type CertDocView } from '../api';
import { ErrorBox } from '../components';
import { Gate } from '../gate';

/**
 * Adds or replaces a certificate as a draft (`config set cert`). The private key is
 * write-only: the field starts empty (the server never gives a key back) and is cleared
 * once saved, so the key stays in the page no longer than it takes to send it.
 */
export function CertificateForm({ tenant, name, current, onSaved }: { tenant: string; name: string; current: CertDocView | null; onSaved: () => void }) {
  const [certificate, setCertificate] = useState('');
  const [privateKey, setPrivateKey] = useState('');
  // A replacement writes the whole document: hosts and default start as they are now.
  const [hosts, setHosts] = useState((current?.hosts ?? []).join(' '));
  const [isDefault, setDefault] = useState(current?.default ?? false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(null);
    const hostList = hosts.split(/[\s,]+/).filter(Boolean);
    const doc = { certificate, privateKey, ...(hostList.length ? { hosts: hostList } : {}), ...(isDefault ? { default: true } : {}) };
    try {
      const r = await api<{ generation: number }>('POST', tpath(tenant, `config/set/cert/${seg(name)}`), doc);
      setCertificate('');
      setPrivateKey('');
      setSaved(`Draft saved (written against generation ${r.generation}). Publish to serve it.`);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Gate feature="config.set">
      {(disabled) => (
        <form className="stack cert-form" onSubmit={save} aria-labelledby="cert-form-title">
          <h3 id="cert-form-title">{current ? 'Replace the certificate' : 'Add the certificate'}</h3>
          <label htmlFor="cert-pem">Certificate (PEM chain, the leaf first)</label>
          <textarea
            id="cert-pem"
            className="json"
            rows={8}
            spellCheck={false}
            value={certificate}
            onChange={(e) => setCertificate(e.target.value)}
            disabled={disabled}
            required
            data-testid="cert-certificate"
          />
          <label htmlFor="cert-key">Private key (unencrypted PEM; write-only, never shown again)</label>
          <textarea
            id="cert-key"
            className="json"
            rows={6}
            spellCheck={false}
            autoComplete="off"
            value={privateKey}
            onChange={(e) => setPrivateKey(e.target.value)}
            disabled={disabled}
            required
            data-testid="cert-private-key"
          />
          <label htmlFor="cert-hosts">Hosts (optional, separated by spaces; default: the certificate's DNS names)</label>
          <input id="cert-hosts" value={hosts} onChange={(e) => setHosts(e.target.value)} disabled={disabled} data-testid="cert-hosts" />
          <label className="check">
            <input type="checkbox" checked={isDefault} onChange={(e) => setDefault(e.target.checked)} disabled={disabled} data-testid="cert-default-flag" />
            Default: answers a handshake for a name no certificate serves
          </label>
          <ErrorBox error={error} testId="cert-error" />
          {saved && (
            <p className="ok" role="status" data-testid="cert-saved">
              {saved}
            </p>
          )}
          <div>
            <button type="submit" disabled={disabled} data-testid="cert-save">
              Save draft
            </button>
          </div>
        </form>
      )}
    </Gate>
  );
}
