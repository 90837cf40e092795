/**
 * The designer model drawn as xyflow nodes and edges (pure): one `step` node per chain
 * node, one `groupBox` node behind the members of each group, one edge per link.
 */
import { MarkerType, type Edge, type Node } from '@xyflow/react';
import type { StepInfo } from '../api';
import type { Model } from './designer-state';
import type { IssueIndex, ShownIssue } from './issues';
import { edgeFlowId, endpointFlowId, groupBox, groupFlowId, groupOf, type OrchGroup, type OrchNode } from './orch-doc';

/** Not in the step catalogue; never said without a catalogue to look in (the key may not read it). */
export function isUnknownStep(steps: ReadonlyMap<string, StepInfo>, code: string): boolean {
  return steps.size > 0 && !steps.has(code);
}

export type StepNodeData = {
  node: OrchNode;
  info?: StepInfo;
  /** Not in the step catalogue (only said when there is a catalogue to look in). */
  unknown: boolean;
  issues: ShownIssue[];
  active: boolean;
  groupId?: string;
};

export type GroupNodeData = {
  group: OrchGroup;
  issues: ShownIssue[];
};

export type StepFlowNode = Node<StepNodeData, 'step'>;
export type GroupFlowNode = Node<GroupNodeData, 'groupBox'>;
export type FlowNode = StepFlowNode | GroupFlowNode;

const NO_ISSUES: ShownIssue[] = [];

export function toFlow(m: Model, steps: ReadonlyMap<string, StepInfo>, issues: IssueIndex, activeId: string | null): { nodes: FlowNode[]; edges: Edge[] } {
  const selected = new Set(m.selected);
  const selectedEdges = new Set(m.selectedEdges);
  const nodes: FlowNode[] = [];
  for (const g of m.doc.groups ?? []) {
    const box = groupBox(g, m.positions, m.sizes);
    if (!box) continue;
    const id = groupFlowId(g.id);
    nodes.push({
      id,
      type: 'groupBox',
      position: { x: box.x, y: box.y },
      width: box.width,
      height: box.height,
      measured: { width: box.width, height: box.height },
      zIndex: -1,
      selected: selected.has(id),
      ariaLabel: `Group ${g.id}, merge ${g.merge ?? 'all'}, members ${g.nodes.join(', ')}`,
      data: { group: g, issues: issues.byGroup.get(g.id) ?? NO_ISSUES },
    });
  }
  for (const n of m.doc.nodes) {
    nodes.push({
      id: n.id,
      type: 'step',
      position: m.positions[n.id] ?? { x: 0, y: 0 },
      ...(m.sizes[n.id] ? { measured: m.sizes[n.id] } : {}),
      selected: selected.has(n.id),
      ariaLabel: `Node ${n.id}, step ${n.step}`,
      data: {
        node: n,
        info: steps.get(n.step),
        unknown: isUnknownStep(steps, n.step),
        issues: issues.byNode.get(n.id) ?? NO_ISSUES,
        active: n.id === activeId,
        groupId: groupOf(m.doc, n.id)?.id,
      },
    });
  }
  const edges: Edge[] = [];
  m.doc.links.forEach((l, i) => {
    const source = endpointFlowId(m.doc, l.from);
    const target = endpointFlowId(m.doc, l.to);
    if (!source || !target) return;
    const id = edgeFlowId(i);
    const found = issues.byLink.get(i);
    edges.push({
      id,
      source,
      target,
      selected: selectedEdges.has(id),
      markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 },
      ariaLabel: `Link from ${l.from} to ${l.to}`,
      className: found ? 'sy-edge-issue' : undefined,
      label: found ? found.map((x) => x.code).join(', ') : undefined,
    });
  });
  return { nodes, edges };
}
