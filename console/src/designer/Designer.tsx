/**
 * The orchestration chain designer: palette on the left, the chain as a graph in the
 * middle (xyflow), the selected node's panel on the right. Save writes the draft with
 * config set; Dry-run compiles the tenant's drafts and puts this chain's issues on the
 * nodes they concern.
 */
import '@xyflow/react/dist/style.css';
import './designer.css';
import { useEffect, useMemo, useReducer, useRef, type JSX, type KeyboardEvent } from 'react';
import { Background, Controls, ReactFlow, ReactFlowProvider, useReactFlow, type Connection } from '@xyflow/react';
import { nodeTypes } from './canvas-nodes';
import { initialModel, reducer } from './designer-state';
import { focusOf } from './focus';
import { toFlow } from './flow-model';
import { Inspector } from './inspector';
import { Messages } from './messages';
import { indexIssues, type IssueTarget } from './issues';
import { IssuesList } from './issues-list';
import { edgeFlowId, groupFlowId, groupIdOf, isGroupFlowId } from './orch-doc';
import { Palette } from './palette';
import { SelectionPanel } from './selection-panel';
import { Toolbar } from './toolbar';
import { useAddStep } from './use-add-step';
import { useChain } from './use-chain';
import { useFeature } from '../gate';

export interface DesignerProps {
  tenant: string;
  name: string;
  onClose?: () => void;
}

export function Designer(props: DesignerProps): JSX.Element {
  return (
    <ReactFlowProvider key={`${props.tenant}/${props.name}`}>
      <DesignerBody {...props} />
    </ReactFlowProvider>
  );
}

const FIT = { maxZoom: 1, padding: 0.2 };
const docIdOf = (flowId: string) => (isGroupFlowId(flowId) ? groupIdOf(flowId) : flowId);
/** Keys typed into these go to the field, not to the canvas. */
const typingIn = (t: EventTarget) =>
  t instanceof HTMLTextAreaElement ||
  t instanceof HTMLSelectElement ||
  (t instanceof HTMLElement && t.isContentEditable) ||
  (t instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit'].includes(t.type));

function DesignerBody({ tenant, name, onClose }: DesignerProps) {
  const [model, dispatch] = useReducer(reducer, undefined, () => initialModel());
  const catalog = useFeature('designer.palette') === 'enabled';
  const chain = useChain(tenant, name, model, dispatch, catalog);
  const canvasRef = useRef<HTMLDivElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const rf = useReactFlow();

  // Opened below other content (e.g. a list): bring the whole designer on screen.
  useEffect(() => {
    rootRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);

  const stepMap = useMemo(() => new Map((chain.steps ?? []).map((s) => [s.code, s])), [chain.steps]);
  const issues = useMemo(() => indexIssues(chain.findings, model.doc), [chain.findings, model.doc]);
  const focus = focusOf(model);
  const activeId = focus?.type === 'node' ? focus.id : null;
  const flow = useMemo(() => toFlow(model, stepMap, issues, activeId), [model, stepMap, issues, activeId]);
  const adder = useAddStep(canvasRef, model, dispatch, (code) => stepMap.get(code)?.enabled === true);
  const loaded = chain.source !== null;
  // Fit only a chain that opened with nodes: on an empty canvas the fit would jump to the first node added.
  const fitOnOpen = useRef<boolean | null>(null);
  if (loaded && fitOnOpen.current === null) fitOnOpen.current = model.doc.nodes.length > 0;

  const show = (t: IssueTarget) => {
    if (t.type === 'node') dispatch({ type: 'select-only', id: t.id });
    else if (t.type === 'group') dispatch({ type: 'select-only', id: groupFlowId(t.id) });
    else if (t.type === 'link') {
      const i = model.doc.links.findIndex((l) => l.from === t.from && l.to === t.to);
      if (i >= 0) dispatch({ type: 'edges-changed', changes: [{ type: 'select', id: edgeFlowId(i), selected: true }] });
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (typingIn(e.target)) return;
    const inCanvas = canvasRef.current?.contains(e.target as Node) ?? false;
    if (e.key === 'Delete' || (e.key === 'Backspace' && inCanvas)) {
      e.preventDefault();
      dispatch({ type: 'delete-selected' });
    } else if (e.key === 'Escape' && inCanvas) {
      dispatch({ type: 'select-only', id: null });
    }
  };

  const onConnect = (c: Connection) => {
    if (c.source && c.target) dispatch({ type: 'add-link', from: docIdOf(c.source), to: docIdOf(c.target) });
  };

  return (
    <div className="sy-designer" ref={rootRef} onKeyDown={onKeyDown} data-testid="designer">
      <Toolbar
        name={name}
        source={chain.source}
        dirty={model.dirty}
        busy={chain.busy}
        canDelete={model.selected.length + model.selectedEdges.length > 0 || focus !== null}
        hasNodes={model.doc.nodes.length > 0}
        onDelete={() => dispatch({ type: 'delete-selected' })}
        onLayout={() => {
          dispatch({ type: 'relayout' });
          setTimeout(() => void rf.fitView(FIT), 50);
        }}
        onFit={() => void rf.fitView(FIT)}
        onSave={chain.save}
        onDryRun={chain.runDryRun}
        onClose={onClose}
      />
      <Messages saved={chain.saved && !model.dirty} notice={model.notice} error={chain.error} />
      <Palette steps={chain.steps} catalog={catalog} onAdd={adder.addAtFreeSpot} />
      <div className="sy-canvas" ref={canvasRef} onDragOver={adder.onDragOver} onDrop={adder.onDrop} data-testid="designer-canvas">
        {loaded ? (
          <ReactFlow
            nodes={flow.nodes}
            edges={flow.edges}
            nodeTypes={nodeTypes}
            onNodesChange={(changes) => dispatch({ type: 'nodes-changed', changes })}
            onEdgesChange={(changes) => dispatch({ type: 'edges-changed', changes })}
            onConnect={onConnect}
            onPaneClick={() => dispatch({ type: 'select-only', id: null })}
            deleteKeyCode={null}
            multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
            elevateNodesOnSelect={false}
            fitView={fitOnOpen.current === true}
            fitViewOptions={FIT}
            minZoom={0.2}
            aria-label={`Chain ${name}`}
          >
            <Background gap={16} />
            <Controls showInteractive={false} />
          </ReactFlow>
        ) : (
          <p className="sy-hint sy-loading">{chain.error ? 'Could not load the chain.' : 'Loading…'}</p>
        )}
        {loaded && model.doc.nodes.length === 0 && (
          <p className="sy-empty-hint" data-testid="designer-empty">
            {chain.source === 'new' ? `New chain ${name}: add` : 'Add'} steps from the palette (click, Enter or drag).
          </p>
        )}
      </div>
      <aside className="sy-side" aria-label="Chain details">
        <Inspector model={model} steps={stepMap} issues={issues} chainNames={chain.chainNames} dispatch={dispatch} />
        <SelectionPanel model={model} dispatch={dispatch} />
        {chain.outcome && (
          <>
            {chain.outcome.stale && <p className="sy-hint">This dry-run ran before the last Save; run it again to check the current draft.</p>}
            {!chain.outcome.stale && model.dirty && <p className="sy-hint">Dry-run checks the draft on the server: edits count once you Save.</p>}
            <IssuesList outcome={chain.outcome} name={name} onShow={show} />
          </>
        )}
      </aside>
    </div>
  );
}
