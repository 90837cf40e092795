/**
 * What the side panel shows: the one selected node, group or link, or, while nothing
 * is selected, the node added last.
 */
import type { Model } from './designer-state';
import { groupIdOf, isGroupFlowId, linkIndexOf } from './orch-doc';

export type Focus = { type: 'node'; id: string } | { type: 'group'; id: string } | { type: 'link'; index: number } | null;

export function focusOf(m: Model): Focus {
  if (m.selected.length === 1 && !m.selectedEdges.length) {
    const id = m.selected[0]!;
    if (isGroupFlowId(id)) return m.doc.groups?.some((g) => g.id === groupIdOf(id)) ? { type: 'group', id: groupIdOf(id) } : null;
    return m.doc.nodes.some((n) => n.id === id) ? { type: 'node', id } : null;
  }
  if (!m.selected.length && m.selectedEdges.length === 1) {
    const index = linkIndexOf(m.selectedEdges[0]!);
    return m.doc.links[index] ? { type: 'link', index } : null;
  }
  if (!m.selected.length && !m.selectedEdges.length && m.lastAdded && m.doc.nodes.some((n) => n.id === m.lastAdded)) {
    return { type: 'node', id: m.lastAdded };
  }
  return null;
}
