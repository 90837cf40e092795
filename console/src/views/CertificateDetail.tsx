import { useEffect, useState } from 'react';
import { api, seg, tpath, type CertView } from '../api';
import { ErrorBox, Section } from '../components';
import { GatedButton } from '../gate';
import { CertFacts } from './CertFacts';
import { CertificateForm } from './CertificateForm';

/** One certificate: its draft and published versions side by side with what each says, and the form that replaces it. */
export function CertificateDetail({ tenant, name, onChange }: { tenant: string; name: string; onChange: () => void }) {
  const [view, setView] = useState<CertView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  // The form appears once the document is in: it starts from the current hosts and default.
  const [loaded, setLoaded] = useState(false);

  const load = () =>
    api<CertView>('GET', tpath(tenant, `config/get/cert/${seg(name)}`)).then(
      (v) => {
        setView(v);
        setLoaded(true);
      },
      (e) => {
        setView(null);
        if (e?.status !== 404) setError(e); // 404: a new certificate
        setLoaded(true);
      },
    );
  useEffect(() => void load(), []);

  const changed = () => {
    setNote(null);
    onChange();
    void load();
  };
  const remove = async () => {
    setError(null);
    try {
      await api('POST', tpath(tenant, `config/delete/cert/${seg(name)}`), {});
      changed();
      setNote('Removal staged: the next publish applies it.');
    } catch (e) {
      setError(e);
    }
  };

  return (
    <Section
      title={`Certificate ${name}`}
      actions={
        <GatedButton feature="config.delete" onClick={remove} disabled={!view} data-testid="cert-delete">
          Stage delete
        </GatedButton>
      }
    >
      <p className="hint" data-testid="cert-state">
        {view ? `State: ${view.state}${view.published ? `, published in generation ${view.published.generation}` : ', never published'}` : loaded ? 'New: not saved yet' : 'Loading…'}
        {view?.pending === 'delete' && <strong> Removal staged: the next publish removes it. Saving a draft cancels the removal.</strong>}
      </p>
      <ErrorBox error={error} testId="cert-load-error" />
      {note && (
        <p className="ok" role="status">
          {note}
        </p>
      )}
      <div className="cert-versions">
        {view?.draft && <CertFacts title="Draft: the next publish serves it" doc={view.draft.doc} testId="cert-draft" />}
        {view?.published && <CertFacts title={`Published in generation ${view.published.generation}`} doc={view.published.doc} testId="cert-published" />}
      </div>
      {loaded && <CertificateForm tenant={tenant} name={name} current={view?.draft?.doc ?? view?.published?.doc ?? null} onSaved={changed} />}
    </Section>
  );
}
