import { useEffect, useState } from 'react';
import { api, seg, tpath, type EntityListItem, type EntityView, type Kind } from '../api';
import { ErrorBox, Section, Table, useLoad } from '../components';
import { Gate, GatedButton } from '../gate';
import { go, VIEW_OF_KIND } from '../hash-route';
import { Designer } from '../designer/Designer';
import { ClusterHealth } from './ClusterHealth';
import { TEMPLATE } from '../entity-templates';

/** Clusters, Routes and Chains: the list with draft/published state, and a JSON editor. */
export function Entities({ kind, tenant, selected }: { kind: Kind; tenant: string; selected: string | null }) {
  const list = useLoad(() => api<{ items: EntityListItem[] }>('GET', tpath(tenant, `config/list/${kind}`)), [tenant, kind]);
  const [newName, setNewName] = useState('');
  const title = { cluster: 'Clusters', route: 'Routes', orch: 'Chains' }[kind];
  return (
    <>
      <Section title={title} actions={<button onClick={list.reload}>Refresh</button>}>
        <ErrorBox error={list.error} />
        <Table data-testid={`${kind}-list`} head={['Name', 'State', 'Pending', 'Published in']}>
            {(list.data?.items ?? []).map((e) => (
              <tr key={e.name} className={e.name === selected ? 'selected' : undefined}>
                <td>
                  <a href={`#/${VIEW_OF_KIND[kind]}/${encodeURIComponent(e.name)}`} data-testid={`entity-${e.name}`}>
                    {e.name}
                  </a>
                </td>
                <td>{e.state}</td>
                <td>{e.pending ?? '—'}</td>
                <td>{e.publishedGeneration ?? '—'}</td>
              </tr>
            ))}
        </Table>
        <Gate feature="config.set">
          {(disabled) => (
            <form
              className="inline"
              onSubmit={(e) => {
                e.preventDefault();
                if (newName.trim()) go(VIEW_OF_KIND[kind], newName.trim());
              }}
            >
              <label htmlFor={`new-${kind}`}>New {kind} name</label>
              <input id={`new-${kind}`} value={newName} onChange={(e) => setNewName(e.target.value)} disabled={disabled} data-testid="new-name" />
              <button type="submit" disabled={disabled} data-testid="new-entity">
                New
              </button>
            </form>
          )}
        </Gate>
      </Section>
      {selected && <Editor key={`${kind}/${selected}`} kind={kind} tenant={tenant} name={selected} onChange={list.reload} />}
      {selected && kind === 'cluster' && <Gate feature="cluster.health">{(off) => !off && <ClusterHealth key={selected} tenant={tenant} name={selected} />}</Gate>}
    </>
  );
}

function Editor({ kind, tenant, name, onChange }: { kind: Kind; tenant: string; name: string; onChange: () => void }) {
  const [view, setView] = useState<EntityView | null>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [designer, setDesigner] = useState(false);
  // The editor appears once the document is in: text typed earlier would be overwritten by the load.
  const [loaded, setLoaded] = useState(false);

  const load = () =>
    api<EntityView>('GET', tpath(tenant, `config/get/${kind}/${seg(name)}`)).then(
      (v) => {
        setView(v);
        const doc = v.draft?.doc ?? v.published?.doc ?? TEMPLATE[kind];
        setText(JSON.stringify(doc, null, 2));
        setLoaded(true);
      },
      (e) => {
        setView(null);
        setText(JSON.stringify(TEMPLATE[kind], null, 2)); // a new entity
        if (e?.status !== 404) setError(e);
        setLoaded(true);
      },
    );
  useEffect(() => void load(), []);

  const save = async () => {
    setError(null);
    setSaved(null);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      setError(new Error(`Not valid JSON: ${(e as Error).message}`));
      return;
    }
    try {
      const r = await api<{ generation: number }>('POST', tpath(tenant, `config/set/${kind}/${seg(name)}`), doc);
      setSaved(`Draft saved (written against generation ${r.generation}). Publish to serve it.`);
      onChange();
      void load();
    } catch (e) {
      setError(e);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await api('POST', tpath(tenant, `config/delete/${kind}/${seg(name)}`), {});
      setSaved('Removal staged: the next publish applies it.');
      onChange();
      void load();
    } catch (e) {
      setError(e);
    }
  };

  if (designer && kind === 'orch') return <Designer tenant={tenant} name={name} onClose={() => (setDesigner(false), onChange(), void load())} />;
  return (
    <Section
      title={`${kind} ${name}`}
      actions={
        <>
          {kind === 'orch' && (
            <button onClick={() => setDesigner(true)} data-testid="open-designer">
              Open in designer
            </button>
          )}
          <GatedButton feature="config.delete" onClick={remove} disabled={!view} data-testid="entity-delete">
            Stage delete
          </GatedButton>
        </>
      }
    >
      <p className="hint" data-testid="entity-state">
        {view ? `State: ${view.state}${view.published ? `, published in generation ${view.published.generation}` : ', never published'}` : 'New: not saved yet'}
        {view?.pending === 'delete' && (
          <strong data-testid="entity-removal-staged"> Removal staged: the next publish removes it. Saving a draft cancels the removal.</strong>
        )}
      </p>
      <label htmlFor="doc-editor">Document (JSON)</label>
      {loaded ? (
        <textarea id="doc-editor" className="json" spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} rows={16} data-testid="doc-editor" />
      ) : (
        <p className="hint">Loading…</p>
      )}
      <ErrorBox error={error} testId="entity-error" />
      {saved && (
        <p className="ok" role="status" data-testid="entity-saved">
          {saved}
        </p>
      )}
      <GatedButton feature="config.set" onClick={save} data-testid="entity-save">
        Save draft
      </GatedButton>
      {view?.published && (
        <details>
          <summary>Published version (generation {view.published.generation})</summary>
          <pre className="json">{JSON.stringify(view.published.doc, null, 2)}</pre>
        </details>
      )}
    </Section>
  );
}
