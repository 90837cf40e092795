/**
 * The side panel for one group: members, merge mode, links of the group as a whole,
 * findings on it, and Ungroup (the members stay, as separate nodes).
 */
import { useId, type Dispatch } from 'react';
import type { Action } from './designer-state';
import type { ShownIssue } from './issues';
import { PanelIssues } from './issues-list';
import { LinkControls } from './link-controls';
import { MERGES, type OrchDoc, type OrchGroup } from './orch-doc';

const MERGE_HELP: Record<string, string> = {
  all: 'all: passes when every member passes; otherwise the first failure answers',
  any: 'any: passes when one member passes; the changes of those that passed apply',
  first: 'first: whichever member settles first decides',
};

export function GroupPanel({ group, doc, issues, dispatch }: { group: OrchGroup; doc: OrchDoc; issues: ShownIssue[]; dispatch: Dispatch<Action> }) {
  const mergeId = useId();
  const merges: string[] = [...MERGES];
  if (group.merge && !merges.includes(group.merge)) merges.push(group.merge);
  return (
    <section className="sy-panel-section" aria-label={`Group ${group.id}`} data-testid="group-panel">
      <h3>
        Group <span data-testid="panel-group-id">{group.id}</span>
      </h3>
      <p className="sy-hint">Members run concurrently: {group.nodes.join(', ')}</p>
      <div className="sy-field">
        <label htmlFor={mergeId}>Merge</label>
        <select
          id={mergeId}
          data-testid="group-edit-merge"
          value={group.merge ?? ''}
          onChange={(e) => dispatch({ type: 'set-merge', groupId: group.id, merge: e.target.value || undefined })}
        >
          <option value="">(default: all)</option>
          {merges.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <div className="sy-hint">{MERGE_HELP[group.merge ?? 'all'] ?? ''}</div>
      </div>
      <PanelIssues issues={issues} testId="group-panel-issues" />
      <p className="sy-hint">Ungroup (under the node list) dissolves the group; its members stay.</p>
      <LinkControls from={group.id} doc={doc} dispatch={dispatch} />
    </section>
  );
}
