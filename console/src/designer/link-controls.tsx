/**
 * Links of one node or group, without the mouse: the links in and out (each removable)
 * and "Add link" to a target chosen from a select.
 */
import { useId, useState, type Dispatch } from 'react';
import type { Action } from './designer-state';
import { groupOf, type OrchDoc } from './orch-doc';
import { wouldCycle } from './link-cycles';

export function LinkControls({ from, doc, dispatch }: { from: string; doc: OrchDoc; dispatch: Dispatch<Action> }) {
  const selectId = useId();
  const [target, setTarget] = useState('');
  const unit = (id: string) => groupOf(doc, id)?.id ?? id;
  const mine = unit(from);
  const linked = new Set(doc.links.filter((l) => l.from === from).map((l) => l.to));
  const candidates = [
    ...doc.nodes.map((n) => ({ id: n.id, label: `${n.id} (${n.step})` })),
    ...(doc.groups ?? []).map((g) => ({ id: g.id, label: `${g.id} (group)` })),
  ].filter((c) => c.id !== from && unit(c.id) !== mine && !linked.has(c.id) && !wouldCycle(doc, from, c.id, unit));
  const chosen = candidates.some((c) => c.id === target) ? target : (candidates[0]?.id ?? '');
  const links = doc.links.map((l, index) => ({ ...l, index })).filter((l) => l.from === from || l.to === from);

  return (
    <section className="sy-links" aria-label={`Links of ${from}`}>
      <h4>Links</h4>
      {links.length === 0 ? (
        <p className="sy-hint">No links yet. A node runs after the nodes linked to it.</p>
      ) : (
        <ul className="sy-link-list" data-testid="node-links">
          {links.map((l) => (
            <li key={l.index}>
              <span>
                {l.from} → {l.to}
              </span>
              <button
                type="button"
                className="sy-link-button"
                aria-label={`Remove link ${l.from} to ${l.to}`}
                onClick={() => dispatch({ type: 'remove-link', index: l.index })}
              >
                remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="sy-row">
        <label htmlFor={selectId}>Link to</label>
        <select id={selectId} data-testid="link-target" value={chosen} onChange={(e) => setTarget(e.target.value)} disabled={!candidates.length}>
          {candidates.length === 0 && <option value="">(no other node)</option>}
          {candidates.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
        <button type="button" data-testid="add-link" disabled={!chosen} onClick={() => dispatch({ type: 'add-link', from, to: chosen })}>
          Add link
        </button>
      </div>
    </section>
  );
}
