import { useState } from 'react';
import { api, ApiError, tpath, type CompileIssue, type DryRun } from '../api';
import { VIEW_OF_KIND } from '../hash-route';
import { ErrorBox, Table, Section, useLoad, when } from '../components';
import { GatedButton } from '../gate';
import { DiffResult, loadDiff, type DiffAnswer } from './PublishDiff';

/** Dry-run (planned changes, issues and warnings linked to their entities), the diff of each entity's fields, then go; history and rollback. */
export function Publish({ tenant }: { tenant: string }) {
  const [dry, setDry] = useState<DryRun | null>(null);
  const [diff, setDiff] = useState<DiffAnswer | null>(null);
  const [published, setPublished] = useState<{ generation: number; planned: string[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const history = useLoad(() => api<{ current: number; items: { generation: number; action: string; planned: string[]; createdAt: string }[] }>('GET', tpath(tenant, 'publish/history?limit=20')), [tenant]);

  const dryRun = async () => {
    setError(null);
    setPublished(null);
    try {
      setDry(await api<DryRun>('POST', tpath(tenant, 'publish/dry-run'), {}));
    } catch (e) {
      if (e instanceof ApiError && e.status === 422) setDry(e.body as unknown as DryRun);
      else setError(e);
    }
  };
  const showDiff = async () => {
    setError(null);
    setPublished(null);
    setDiff(null); // a diff left on screen under an error would read as the current one
    try {
      setDiff(await loadDiff(tenant));
    } catch (e) {
      setError(e);
    }
  };
  const publish = async () => {
    setError(null);
    try {
      const r = await api<{ generation: number; planned: string[] }>('POST', tpath(tenant, 'publish/go'), {});
      setPublished(r);
      setDry(null);
      setDiff(null);
      history.reload();
    } catch (e) {
      if (e instanceof ApiError && e.status === 422) setDry(e.body as unknown as DryRun);
      setError(e);
    }
  };
  const rollback = async (generation: number) => {
    setError(null);
    try {
      setPublished(await api<{ generation: number; planned: string[] }>('POST', tpath(tenant, `publish/rollback/${generation}`), {}));
      setDiff(null);
      history.reload();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <Section
        title={`Publish ${tenant}`}
        actions={
          <>
            <GatedButton feature="publish.dry-run" onClick={dryRun} data-testid="dry-run">
              Dry-run
            </GatedButton>
            <GatedButton feature="publish.diff" onClick={showDiff} data-testid="diff-show">
              Diff
            </GatedButton>
            <GatedButton feature="publish.go" onClick={publish} data-testid="publish-go" className="primary">
              Publish
            </GatedButton>
          </>
        }
      >
        <ErrorBox error={error} testId="publish-error" />
        {published && (
          <p className="ok" role="status" data-testid="published">
            Generation <strong data-testid="published-generation">{published.generation}</strong> is serving. Changed: {published.planned.join(', ') || 'nothing'}.
          </p>
        )}
        {diff && <DiffResult diff={diff} />}
        {dry && (
          <div data-testid="dry-run-result">
            <p>
              {dry.success ? 'Compiles.' : `${dry.issues.length} issue(s): the previous generation keeps serving.`} Candidate generation {dry.candidateGeneration}.
            </p>
            <h3>Planned changes</h3>
            <ul className="plain" data-testid="planned">
              {dry.planned.map((p) => (
                <li key={p}>{p}</li>
              ))}
              {dry.planned.length === 0 && <li>Nothing to publish.</li>}
            </ul>
            <FindingList title="Issues" testId="issues" list={dry.issues} />
            <FindingList title="Warnings" testId="warnings" list={dry.warnings ?? []} />
          </div>
        )}
      </Section>
      <Section title="History" actions={<button onClick={history.reload}>Refresh</button>}>
        <ErrorBox error={history.error} />
        <Table data-testid="history" head={['Generation', 'Action', 'When', 'Changed', '']}>
            {(history.data?.items ?? []).map((h) => (
              <tr key={h.generation}>
                <td>{h.generation}</td>
                <td>{h.action}</td>
                <td>{when(h.createdAt)}</td>
                <td>{h.planned.join(', ')}</td>
                <td>
                  <GatedButton feature="publish.rollback" onClick={() => rollback(h.generation)} disabled={h.generation === history.data?.current}>
                    Roll back to {h.generation}
                  </GatedButton>
                </td>
              </tr>
            ))}
          </Table>
      </Section>
    </>
  );
}

/** Dry-run issues or warnings, each linked to its entity. */
function FindingList({ title, testId, list }: { title: string; testId: string; list: CompileIssue[] }) {
  if (list.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul className="issues" data-testid={testId}>
        {list.map((i, n) => (
          <li key={n}>
            <a href={`#/${VIEW_OF_KIND[i.kind] ?? 'routes'}/${encodeURIComponent(i.name)}`}>
              {i.kind}/{i.name}
            </a>{' '}
            <code>{i.pointer || '/'}</code> <strong>{i.code}</strong> {i.message}
          </li>
        ))}
      </ul>
    </>
  );
}
