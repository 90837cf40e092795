/**
 * The designer's in-memory model and its reducer (pure). The orch document is the model;
 * positions, measured sizes and the selection sit next to it. xyflow's node and edge
 * changes are folded in here, so the canvas is always drawn from this state.
 */
import type { EdgeChange, NodeChange } from '@xyflow/react';
import { autoLayout } from './auto-layout';
import { addLink, addNode, groupNodes, removeElements, renameNode, setGroupMerge, updateNode } from './doc-edits';
import { onEdgesChanged, onNodesChanged } from './flow-changes';
import { groupFlowId, groupIdOf, isGroupFlowId, linkIndexOf, normalizeDoc, type OrchDoc, type OrchNode, type Size, type XY } from './orch-doc';

export interface Model {
  doc: OrchDoc;
  positions: Record<string, XY>;
  /** Measured sizes by xyflow node id. */
  sizes: Record<string, Size>;
  /** Selected xyflow node ids: node ids and group box ids. */
  selected: string[];
  selectedEdges: string[];
  /**
   * True while the selection is being built with the node list's checkboxes. The first
   * box checked after a selection made on the canvas starts a new selection.
   */
  listSelection: boolean;
  /** The node added last, shown in the side panel while nothing is selected. */
  lastAdded: string | null;
  dirty: boolean;
  /** A local explanation of an edit that was refused. */
  notice: string | null;
}

export type Action =
  | { type: 'load'; doc: unknown }
  | { type: 'add-node'; step: string; at: XY }
  | { type: 'nodes-changed'; changes: NodeChange[] }
  | { type: 'edges-changed'; changes: EdgeChange[] }
  | { type: 'toggle-select'; id: string }
  | { type: 'select-only'; id: string | null }
  | { type: 'add-link'; from: string; to: string }
  | { type: 'remove-link'; index: number }
  | { type: 'delete-selected' }
  | { type: 'group'; ids: string[]; merge: string }
  | { type: 'ungroup'; groupIds: string[] }
  | { type: 'update-node'; id: string; change: (n: OrchNode) => OrchNode }
  | { type: 'rename-node'; from: string; to: string }
  | { type: 'set-merge'; groupId: string; merge: string | undefined }
  | { type: 'relayout' }
  /** The document and positions that were written; dirty clears if nothing changed since. */
  | { type: 'saved'; doc: OrchDoc; positions: Record<string, XY> };

export function initialModel(raw?: unknown): Model {
  const doc = normalizeDoc(raw);
  const fixed: Record<string, XY> = {};
  for (const n of doc.nodes) {
    const c = n.canvas;
    if (c && typeof c.x === 'number' && typeof c.y === 'number') fixed[n.id] = { x: c.x, y: c.y };
  }
  return { doc, positions: autoLayout(doc, fixed), sizes: {}, selected: [], selectedEdges: [], listSelection: false, lastAdded: null, dirty: false, notice: null };
}

const renameKey = <T>(rec: Record<string, T>, from: string, to: string): Record<string, T> => {
  if (!(from in rec)) return rec;
  const { [from]: v, ...rest } = rec;
  return { ...rest, [to]: v as T };
};

/** A document edit: marks the model dirty and clears the notice. */
const edited = (m: Model, doc: OrchDoc, extra: Partial<Model> = {}): Model => ({ ...m, doc, dirty: true, notice: null, ...extra });

export function reducer(m: Model, a: Action): Model {
  switch (a.type) {
    case 'load':
      return initialModel(a.doc);
    case 'add-node': {
      const r = addNode(m.doc, a.step);
      return edited(m, r.doc, { positions: { ...m.positions, [r.id]: a.at }, selected: [], selectedEdges: [], lastAdded: r.id });
    }
    case 'nodes-changed':
      return onNodesChanged(m, a.changes);
    case 'edges-changed':
      return onEdgesChanged(m, a.changes);
    case 'toggle-select': {
      const on = m.selected.includes(a.id);
      const base = m.listSelection ? m.selected : [];
      const selected = on ? m.selected.filter((x) => x !== a.id) : [...base, a.id];
      return { ...m, selected, selectedEdges: [], listSelection: true, lastAdded: null };
    }
    case 'select-only':
      return { ...m, selected: a.id ? [a.id] : [], selectedEdges: [], listSelection: false, lastAdded: null };
    case 'add-link': {
      const r = addLink(m.doc, a.from, a.to);
      return typeof r === 'string' ? { ...m, notice: r } : edited(m, r);
    }
    case 'remove-link':
      return edited(m, removeElements(m.doc, { links: [a.index] }), { selectedEdges: [] });
    case 'delete-selected': {
      let nodes = m.selected.filter((id) => !isGroupFlowId(id));
      const groups = m.selected.filter(isGroupFlowId).map(groupIdOf);
      const links = m.selectedEdges.map(linkIndexOf).filter((i) => Number.isInteger(i));
      if (!nodes.length && !groups.length && !links.length && m.lastAdded) nodes = [m.lastAdded];
      if (!nodes.length && !groups.length && !links.length) return { ...m, notice: 'Select a node, group or link to delete' };
      const positions = { ...m.positions };
      for (const id of nodes) delete positions[id];
      return edited(m, removeElements(m.doc, { nodes, groups, links }), { positions, selected: [], selectedEdges: [], lastAdded: null });
    }
    case 'group': {
      const r = groupNodes(m.doc, a.ids.filter((id) => !isGroupFlowId(id)), a.merge);
      if (typeof r === 'string') return { ...m, notice: r };
      return edited(m, r.doc, { selected: [groupFlowId(r.groupId)], selectedEdges: [], listSelection: false, lastAdded: null });
    }
    case 'ungroup': {
      if (!a.groupIds.length) return { ...m, notice: 'Select a group, or a node in one, to ungroup' };
      const gone = new Set(a.groupIds.map(groupFlowId));
      return edited(m, removeElements(m.doc, { groups: a.groupIds }), { selected: m.selected.filter((id) => !gone.has(id)), selectedEdges: [] });
    }
    case 'update-node':
      return edited(m, updateNode(m.doc, a.id, a.change));
    case 'rename-node': {
      const r = renameNode(m.doc, a.from, a.to);
      if (typeof r === 'string') return { ...m, notice: r };
      if (r === m.doc) return m;
      const to = a.to.trim();
      const swap = (id: string) => (id === a.from ? to : id);
      return edited(m, r, {
        positions: renameKey(m.positions, a.from, to),
        sizes: renameKey(m.sizes, a.from, to),
        selected: m.selected.map(swap),
        lastAdded: m.lastAdded && swap(m.lastAdded),
      });
    }
    case 'set-merge':
      return edited(m, setGroupMerge(m.doc, a.groupId, a.merge));
    case 'relayout':
      return { ...m, positions: autoLayout(m.doc), dirty: true, notice: null };
    case 'saved':
      return m.doc === a.doc && m.positions === a.positions ? { ...m, dirty: false } : m;
  }
}
