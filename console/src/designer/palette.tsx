/**
 * The step palette: every built-in step of the tenant. Drag one onto the canvas, or
 * click it (Enter/Space) to add it at a free spot in view. Steps disabled for the
 * tenant are greyed and cannot be added.
 */
import { useState, type DragEvent } from 'react';
import type { StepInfo } from '../api';

export const STEP_DRAG_TYPE = 'application/x-switchyard-step';

export function Palette({ steps, catalog, onAdd }: { steps: StepInfo[] | null; catalog: boolean; onAdd: (code: string) => void }) {
  const [filter, setFilter] = useState('');
  const f = filter.trim().toLowerCase();
  const shown = (steps ?? []).filter((s) => !f || s.code.includes(f) || s.summary.toLowerCase().includes(f));
  const onDragStart = (e: DragEvent, code: string) => {
    e.dataTransfer.setData(STEP_DRAG_TYPE, code);
    e.dataTransfer.setData('text/plain', code);
    e.dataTransfer.effectAllowed = 'copy';
  };
  return (
    <nav className="sy-palette" aria-label="Steps" data-testid="palette">
      <h3 id="sy-palette-h">Steps</h3>
      <label className="sy-visually-hidden" htmlFor="sy-palette-filter">
        Filter steps
      </label>
      <input
        id="sy-palette-filter"
        type="search"
        placeholder="Filter steps"
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
        data-testid="palette-filter"
      />
      {!catalog ? (
        <p className="sy-hint" data-testid="palette-unavailable">
          No step catalogue: this key may not read the tenant's steps. Nodes and their settings can still be edited.
        </p>
      ) : steps === null ? (
        <p className="sy-hint">Loading steps…</p>
      ) : (
        <ul aria-labelledby="sy-palette-h">
          {shown.map((s) => (
            <li key={s.code}>
              <button
                type="button"
                className={`sy-palette-step${s.enabled ? '' : ' sy-palette-disabled'}`}
                data-testid={`palette-step-${s.code}`}
                draggable={s.enabled}
                onDragStart={(e) => onDragStart(e, s.code)}
                aria-disabled={s.enabled ? undefined : true}
                aria-label={s.code}
                aria-describedby={`sy-step-${s.code}`}
                title={s.enabled ? `Add ${s.code} (click, Enter, or drag onto the canvas)` : `${s.code} is disabled for this tenant`}
                onClick={() => s.enabled && onAdd(s.code)}
              >
                <span className="sy-palette-code">{s.code}</span>
                <span className="sy-palette-summary" id={`sy-step-${s.code}`}>
                  {s.enabled ? s.summary : `Disabled for this tenant. ${s.summary}`}
                  {s.package ? ` (package ${s.package})` : ''}
                </span>
              </button>
            </li>
          ))}
          {shown.length === 0 && <li className="sy-hint">{steps.length ? 'No step matches.' : 'No steps available.'}</li>}
        </ul>
      )}
    </nav>
  );
}
