/**
 * xyflow's node and edge changes folded into the designer model (pure): drags move
 * positions (a dragged group box moves its members), measurements fill `sizes`, and
 * selection changes update the selection. Removals are not taken from xyflow: deleting
 * goes through the model's own delete (button or Delete key).
 */
import type { EdgeChange, NodeChange } from '@xyflow/react';
import type { Model } from './designer-state';
import { groupBox, groupIdOf, isGroupFlowId } from './orch-doc';

export function onNodesChanged(m: Model, changes: NodeChange[]): Model {
  let positions = m.positions;
  let sizes = m.sizes;
  let selected = m.selected;
  let { lastAdded, dirty } = m;
  const direct = new Set(changes.filter((c) => c.type === 'position' && c.position && !isGroupFlowId(c.id)).map((c) => (c as { id: string }).id));
  for (const c of changes) {
    if (c.type === 'position' && c.position) {
      if (positions === m.positions) positions = { ...positions };
      if (isGroupFlowId(c.id)) {
        // Dragging a group box moves its members.
        const g = m.doc.groups?.find((x) => x.id === groupIdOf(c.id));
        const box = g && groupBox(g, m.positions, m.sizes);
        if (!g || !box) continue;
        const dx = c.position.x - box.x;
        const dy = c.position.y - box.y;
        if (!dx && !dy) continue;
        for (const id of g.nodes) if (!direct.has(id) && m.positions[id]) positions[id] = { x: m.positions[id]!.x + dx, y: m.positions[id]!.y + dy };
      } else if (m.doc.nodes.some((n) => n.id === c.id)) {
        positions[c.id] = c.position;
      }
      dirty = true;
    } else if (c.type === 'dimensions' && c.dimensions) {
      const old = sizes[c.id];
      if (old && old.width === c.dimensions.width && old.height === c.dimensions.height) continue;
      sizes = { ...sizes, [c.id]: c.dimensions };
    } else if (c.type === 'select') {
      if (c.selected && !selected.includes(c.id)) selected = [...selected, c.id];
      else if (!c.selected && selected.includes(c.id)) selected = selected.filter((id) => id !== c.id);
      if (c.selected) lastAdded = null;
    }
  }
  if (positions === m.positions && sizes === m.sizes && selected === m.selected && lastAdded === m.lastAdded) return m;
  return { ...m, positions, sizes, selected, lastAdded, dirty, listSelection: selected === m.selected && m.listSelection };
}

export function onEdgesChanged(m: Model, changes: EdgeChange[]): Model {
  let sel = m.selectedEdges;
  for (const c of changes) {
    if (c.type !== 'select') continue;
    if (c.selected && !sel.includes(c.id)) sel = [...sel, c.id];
    else if (!c.selected && sel.includes(c.id)) sel = sel.filter((id) => id !== c.id);
  }
  return sel === m.selectedEdges ? m : { ...m, selectedEdges: sel, listSelection: false, lastAdded: sel.length ? null : m.lastAdded };
}

