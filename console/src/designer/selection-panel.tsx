/**
 * Every node of the chain with a checkbox (the keyboard way to select several), and
 * grouping of the selection: "Group" with a merge mode, "Ungroup".
 */
import { useId, useState, type Dispatch } from 'react';
import type { Action, Model } from './designer-state';
import { groupIdOf, groupOf, isGroupFlowId, MERGES } from './orch-doc';

export function SelectionPanel({ model, dispatch }: { model: Model; dispatch: Dispatch<Action> }) {
  const base = useId();
  const [merge, setMerge] = useState<string>('all');
  const { doc } = model;
  const selectedNodes = model.selected.filter((id) => !isGroupFlowId(id) && doc.nodes.some((n) => n.id === id));
  const groupsInSelection = [
    ...new Set([
      ...model.selected.filter(isGroupFlowId).map(groupIdOf),
      ...selectedNodes.map((id) => groupOf(doc, id)?.id).filter((g): g is string => !!g),
    ]),
  ].filter((g) => doc.groups?.some((x) => x.id === g));

  return (
    <section className="sy-panel-section" aria-labelledby={`${base}-h`} data-testid="selection-panel">
      <h3 id={`${base}-h`}>Nodes ({doc.nodes.length})</h3>
      {doc.nodes.length === 0 ? (
        <p className="sy-hint">No nodes yet: add steps from the palette.</p>
      ) : (
        <ul className="sy-node-list">
          {doc.nodes.map((n, i) => {
            const g = groupOf(doc, n.id);
            return (
              <li key={n.id + ':' + i}>
                <input
                  type="checkbox"
                  id={`${base}-n${i}`}
                  data-testid={`select-${n.id}`}
                  checked={model.selected.includes(n.id)}
                  onChange={() => dispatch({ type: 'toggle-select', id: n.id })}
                />
                <label htmlFor={`${base}-n${i}`}>
                  {n.id} <small>{n.step}</small>
                  {g && <small className="sy-badge">in {g.id}</small>}
                </label>
              </li>
            );
          })}
        </ul>
      )}
      <div className="sy-row">
        <label htmlFor={`${base}-merge`}>Merge</label>
        <select id={`${base}-merge`} data-testid="group-merge" value={merge} onChange={(e) => setMerge(e.target.value)}>
          {MERGES.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <button
          type="button"
          data-testid="group-selected"
          disabled={selectedNodes.length < 2}
          onClick={() => dispatch({ type: 'group', ids: selectedNodes, merge })}
        >
          Group
        </button>
      </div>
      <div className="sy-row">
        <button
          type="button"
          data-testid="ungroup-selected"
          disabled={!groupsInSelection.length}
          onClick={() => dispatch({ type: 'ungroup', groupIds: groupsInSelection })}
        >
          Ungroup
        </button>
        <span className="sy-hint">
          {selectedNodes.length >= 2 ? `${selectedNodes.length} nodes selected` : 'Check two or more nodes (or Shift+click them) and press Group to run them concurrently.'}
        </span>
      </div>
    </section>
  );
}
