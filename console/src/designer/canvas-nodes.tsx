/**
 * The custom xyflow node components: a chain node (id, step code, badges, findings on
 * it) and the labelled box drawn behind a group's members. Both have a target handle on
 * the left and a source handle on the right, so links can be drawn with the mouse.
 */
import { memo } from 'react';
import { Handle, Position, type NodeProps, type NodeTypes } from '@xyflow/react';
import type { GroupFlowNode, StepFlowNode } from './flow-model';
import type { ShownIssue } from './issues';

function IssueList({ issues, testId }: { issues: ShownIssue[]; testId: string }) {
  if (!issues.length) return null;
  return (
    <ul className="sy-node-issues" data-testid={testId}>
      {issues.map((i, k) => (
        <li key={k} title={`${i.code}: ${i.message}`}>
          <strong>{i.code}</strong>
          {i.target.type !== 'chain' && i.target.sub ? ` ${i.target.sub}` : ''}: {i.message}
        </li>
      ))}
      {issues.length > 3 && <li className="sy-more">+{issues.length - 3} more (see the side panel)</li>}
    </ul>
  );
}

function StepNodeView({ data, selected }: NodeProps<StepFlowNode>) {
  const { node, info, unknown, issues, active, groupId } = data;
  const ref = node.step === 'orch' && typeof node.settings?.ref === 'string' ? node.settings.ref : null;
  const classes = ['sy-node'];
  if (selected) classes.push('sy-node-selected');
  if (active) classes.push('sy-node-active');
  if (issues.length) classes.push('sy-node-has-issue');
  if (info && !info.enabled) classes.push('sy-node-disabled');
  return (
    <div data-testid={`node-${node.id}`} className={classes.join(' ')} title={info?.summary}>
      <Handle type="target" position={Position.Left} className="sy-handle" />
      <div className="sy-node-id">{node.id}</div>
      <div className="sy-node-step">
        <span data-testid={`node-step-${node.id}`}>{node.step}</span>
        {ref !== null && <span className="sy-node-ref"> → {ref || '?'}</span>}
      </div>
      <div className="sy-node-badges">
        {groupId && <span className="sy-badge">in {groupId}</span>}
        {node.failureStrategy && <span className="sy-badge">{node.failureStrategy}</span>}
        {unknown && <span className="sy-badge sy-badge-warn">unknown step</span>}
        {info && !info.enabled && <span className="sy-badge sy-badge-warn">disabled</span>}
      </div>
      <IssueList issues={issues} testId={`node-issue-${node.id}`} />
      <Handle type="source" position={Position.Right} className="sy-handle" />
    </div>
  );
}

function GroupNodeView({ data, selected }: NodeProps<GroupFlowNode>) {
  const { group, issues } = data;
  return (
    <div
      data-testid={`group-${group.id}`}
      className={`sy-group-box${selected ? ' sy-group-selected' : ''}${issues.length ? ' sy-node-has-issue' : ''}`}
    >
      <Handle type="target" position={Position.Left} className="sy-handle" />
      <div className="sy-group-label">
        <span className="sy-group-id">{group.id}</span> · runs together · merge {group.merge ?? 'all'}
      </div>
      <IssueList issues={issues} testId={`group-issue-${group.id}`} />
      <Handle type="source" position={Position.Right} className="sy-handle" />
    </div>
  );
}

export const nodeTypes: NodeTypes = {
  step: memo(StepNodeView),
  groupBox: memo(GroupNodeView),
} as NodeTypes;
