/**
 * The designer's toolbar: chain name and state, and the actions. Save and Dry-run are
 * gated (config.set, publish.dry-run); the other actions only edit the in-memory chain.
 */
import { Gate } from '../gate';
import type { ChainSource } from './chain-io';

export interface ToolbarProps {
  name: string;
  source: ChainSource | null;
  dirty: boolean;
  busy: 'save' | 'dry-run' | null;
  canDelete: boolean;
  hasNodes: boolean;
  onDelete: () => void;
  onLayout: () => void;
  onFit: () => void;
  onSave: () => void;
  onDryRun: () => void;
  onClose?: () => void;
}

const SOURCE_LABEL: Record<ChainSource, string> = {
  new: 'new chain',
  draft: 'draft',
  published: 'published',
  'removal-staged': 'removal staged for the next publish: Save cancels it',
};

export function Toolbar(p: ToolbarProps) {
  const loaded = p.source !== null;
  return (
    <header className="sy-toolbar">
      <h2>
        Chain <span data-testid="designer-name">{p.name}</span>
      </h2>
      {p.source && (
        <span className="sy-badge" data-testid="designer-source">
          {SOURCE_LABEL[p.source]}
        </span>
      )}
      {p.dirty && (
        <span className="sy-badge sy-badge-warn" data-testid="designer-dirty">
          changes not written yet
        </span>
      )}
      <div className="sy-toolbar-actions">
        <button type="button" data-testid="delete-selected" disabled={!p.canDelete} onClick={p.onDelete}>
          Delete selected
        </button>
        <button type="button" data-testid="designer-layout" disabled={!p.hasNodes} onClick={p.onLayout}>
          Auto-layout
        </button>
        <button type="button" data-testid="designer-fit" onClick={p.onFit}>
          Fit view
        </button>
        <Gate feature="config.set">
          {(disabled) => (
            <button type="button" className="sy-primary" data-testid="designer-save" disabled={disabled || !loaded || p.busy !== null} onClick={p.onSave}>
              {p.busy === 'save' ? 'Saving…' : 'Save'}
            </button>
          )}
        </Gate>
        <Gate feature="publish.dry-run">
          {(disabled) => (
            <button type="button" data-testid="designer-dry-run" disabled={disabled || !loaded || p.busy !== null} onClick={p.onDryRun}>
              {p.busy === 'dry-run' ? 'Checking…' : 'Dry-run'}
            </button>
          )}
        </Gate>
        {p.onClose && (
          <button type="button" data-testid="designer-close" onClick={p.onClose}>
            Close
          </button>
        )}
      </div>
    </header>
  );
}
