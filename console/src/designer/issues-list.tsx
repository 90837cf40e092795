/**
 * The outcome of the last dry-run: passed, or every issue of the tenant's drafts, those
 * of this chain first and linked to the node, group or link they concern.
 */
import type { CompileIssue } from '../api';
import { targetOf, type IssueTarget, type ShownIssue } from './issues';
import type { OrchDoc } from './orch-doc';

export interface DryRunOutcome {
  success: boolean;
  candidateGeneration?: number;
  issues: CompileIssue[];
  /** The document the server checked (the saved draft), to place pointers. */
  checked: OrchDoc;
}

function where(t: IssueTarget): string {
  switch (t.type) {
    case 'node':
      return `node ${t.id}${t.sub}`;
    case 'group':
      return `group ${t.id}${t.sub}`;
    case 'link':
      return `link ${t.from} → ${t.to}${t.sub}`;
    default:
      return t.sub || 'chain';
  }
}

export function IssuesList({ outcome, name, onShow }: { outcome: DryRunOutcome; name: string; onShow: (t: IssueTarget) => void }) {
  const ours = (i: CompileIssue) => i.kind === 'orch' && i.name === name;
  const sorted = [...outcome.issues.filter(ours), ...outcome.issues.filter((i) => !ours(i))];
  return (
    <section className="sy-panel-section" aria-label="Dry-run result" data-testid="designer-dry-run-result">
      <h3>Dry-run</h3>
      {outcome.success ? (
        <p className="sy-ok" data-testid="designer-dry-run-ok">
          Passed: the drafts compile
          {outcome.candidateGeneration !== undefined ? ` (would be generation ${outcome.candidateGeneration})` : ''}.
        </p>
      ) : (
        <p className="sy-bad">
          {outcome.issues.length} issue{outcome.issues.length === 1 ? '' : 's'}, {outcome.issues.filter(ours).length} in this chain.
        </p>
      )}
      {sorted.length > 0 && (
        <ul className="sy-issue-list" data-testid="designer-issues">
          {sorted.map((i, k) => {
            const mine = ours(i);
            const t = mine ? targetOf(i.pointer, outcome.checked) : null;
            return (
              <li key={k} className={mine ? 'sy-issue-ours' : ''} data-testid="designer-issue">
                <div>
                  <strong>{i.code}</strong> <span className="sy-hint">{mine && t ? where(t) : `${i.kind} ${i.name} ${i.pointer}`}</span>
                </div>
                <div>{i.message}</div>
                {t && t.type !== 'chain' && (
                  <button type="button" className="sy-link-button" onClick={() => onShow(t)}>
                    Show {t.type}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** The findings placed on one node or group, under its panel: code, where inside it, message. */
export function PanelIssues({ issues, testId }: { issues: readonly ShownIssue[]; testId: string }) {
  if (issues.length === 0) return null;
  return (
    <div className="sy-field-error" data-testid={testId}>
      {issues.map((i, k) => (
        <div key={k}>
          {i.code} {i.target.sub}: {i.message}
        </div>
      ))}
    </div>
  );
}
