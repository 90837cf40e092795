/**
 * The side panel for one node: its id (rename), step code, failure strategy, the
 * settings form generated from the step's schema, and its links. Edits apply at once to
 * the in-memory document.
 */
import { useId, useState, type Dispatch } from 'react';
import type { StepInfo } from '../api';
import type { Action } from './designer-state';
import { settingsErrors, type ShownIssue } from './issues';
import { PanelIssues } from './issues-list';
import { LinkControls } from './link-controls';
import { FAILURE_STRATEGIES, groupOf, type OrchDoc, type OrchNode } from './orch-doc';
import { SchemaForm } from './schema-form';

export interface NodePanelProps {
  node: OrchNode;
  doc: OrchDoc;
  info?: StepInfo;
  /** Not in the step catalogue (false when there is no catalogue). */
  unknown: boolean;
  issues: ShownIssue[];
  /** Other chains of the tenant, suggested for an `orch` node's ref. */
  chainNames: string[];
  dispatch: Dispatch<Action>;
}

function IdField({ id, dispatch }: { id: string; dispatch: Dispatch<Action> }) {
  const inputId = useId();
  const [text, setText] = useState(id);
  const commit = () => {
    if (text.trim() !== id) dispatch({ type: 'rename-node', from: id, to: text });
  };
  return (
    <div className="sy-field">
      <label htmlFor={inputId}>Node id</label>
      <input
        id={inputId}
        data-testid="node-id"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit();
          if (e.key === 'Escape') setText(id);
        }}
      />
      <div className="sy-hint">Renaming updates links and groups (press Enter or leave the field).</div>
    </div>
  );
}

export function NodePanel({ node, doc, info, unknown, issues, chainNames, dispatch }: NodePanelProps) {
  const fsId = useId();
  const group = groupOf(doc, node.id);
  const own = issues.filter((i) => i.target.type === 'node' && !(i.target.sub === '/settings' || i.target.sub.startsWith('/settings/')));
  const strategies: string[] = [...FAILURE_STRATEGIES];
  if (node.failureStrategy && !strategies.includes(node.failureStrategy)) strategies.push(node.failureStrategy);
  const update = (change: (n: OrchNode) => OrchNode) => dispatch({ type: 'update-node', id: node.id, change });

  return (
    <section className="sy-panel-section" aria-label={`Node ${node.id}`} data-testid="node-panel">
      <h3>
        Node <span data-testid="panel-node-id">{node.id}</span>
      </h3>
      <IdField key={node.id} id={node.id} dispatch={dispatch} />
      <div className="sy-field">
        <span className="sy-label">Step</span>
        <div>
          <code data-testid="node-step">{node.step}</code>
          {info && !info.enabled && <span className="sy-badge sy-badge-warn">disabled for this tenant</span>}
          {unknown && <span className="sy-badge sy-badge-warn">unknown step</span>}
        </div>
        {info && <div className="sy-hint">{info.summary}</div>}
        {group && <div className="sy-hint">Runs concurrently with the rest of {group.id}.</div>}
      </div>
      <div className="sy-field">
        <label htmlFor={fsId}>Failure strategy</label>
        <select
          id={fsId}
          data-testid="failure-strategy"
          value={node.failureStrategy ?? ''}
          onChange={(e) => {
            const v = e.target.value;
            update(({ failureStrategy: _old, ...rest }) => (v ? { ...rest, failureStrategy: v } : rest) as OrchNode);
          }}
        >
          <option value="">(default: FailFast)</option>
          {strategies.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <div className="sy-hint">FailFast: this node's failure answers the request. Continue: it is logged and the chain goes on.</div>
      </div>
      <PanelIssues issues={own} testId="node-panel-issues" />
      <fieldset className="sy-fieldset sy-settings">
        <legend>Settings</legend>
        <SchemaForm
          key={node.id}
          schema={info?.settingsSchema}
          value={node.settings}
          errors={settingsErrors(issues)}
          suggestions={node.step === 'orch' ? { ref: chainNames } : undefined}
          onChange={(settings) => update((n) => ({ ...n, settings }))}
        />
      </fieldset>
      <LinkControls from={node.id} doc={doc} dispatch={dispatch} />
    </section>
  );
}
