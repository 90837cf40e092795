/**
 * The top of the side panel: the selected node, group or link (or the node added
 * last), or a hint when nothing is selected.
 */
import type { Dispatch } from 'react';
import type { StepInfo } from '../api';
import type { Action, Model } from './designer-state';
import { focusOf } from './focus';
import { isUnknownStep } from './flow-model';
import { GroupPanel } from './group-panel';
import type { IssueIndex } from './issues';
import { NodePanel } from './node-panel';

export interface InspectorProps {
  model: Model;
  steps: ReadonlyMap<string, StepInfo>;
  issues: IssueIndex;
  chainNames: string[];
  dispatch: Dispatch<Action>;
}

export function Inspector({ model, steps, issues, chainNames, dispatch }: InspectorProps) {
  const focus = focusOf(model);
  const { doc } = model;
  if (focus?.type === 'node') {
    const node = doc.nodes.find((n) => n.id === focus.id)!;
    return (
      <NodePanel
        key={node.id}
        node={node}
        doc={doc}
        info={steps.get(node.step)}
        unknown={isUnknownStep(steps, node.step)}
        issues={issues.byNode.get(node.id) ?? []}
        chainNames={chainNames}
        dispatch={dispatch}
      />
    );
  }
  if (focus?.type === 'group') {
    const group = doc.groups!.find((g) => g.id === focus.id)!;
    return <GroupPanel key={group.id} group={group} doc={doc} issues={issues.byGroup.get(group.id) ?? []} dispatch={dispatch} />;
  }
  if (focus?.type === 'link') {
    const link = doc.links[focus.index]!;
    const found = issues.byLink.get(focus.index) ?? [];
    return (
      <section className="sy-panel-section" aria-label="Link" data-testid="link-panel">
        <h3>
          Link {link.from} → {link.to}
        </h3>
        <p className="sy-hint">{link.to} runs after {link.from}.</p>
        {found.length > 0 && (
          <div className="sy-field-error">
            {found.map((i, k) => (
              <div key={k}>
                {i.code}: {i.message}
              </div>
            ))}
          </div>
        )}
        <button type="button" onClick={() => dispatch({ type: 'remove-link', index: focus.index })}>
          Remove link
        </button>
      </section>
    );
  }
  const many = model.selected.length + model.selectedEdges.length;
  return (
    <section className="sy-panel-section" aria-label="Selection" data-testid="inspector-empty">
      <h3>{many > 1 ? `${many} items selected` : 'Nothing selected'}</h3>
      <p className="sy-hint">
        Click a node to edit it. Add steps from the palette; draw links from a node's right handle to another node's left
        handle, or use "Link to" in a node's panel.
      </p>
    </section>
  );
}
