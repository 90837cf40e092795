/**
 * Adding steps to the canvas: at a free spot in view (palette click or Enter), or where
 * a palette item is dropped. Must be used inside <ReactFlowProvider>.
 */
import type { DragEvent, Dispatch, RefObject } from 'react';
import { useReactFlow } from '@xyflow/react';
import { besideAll, freePosition, type Rect } from './auto-layout';
import type { Action, Model } from './designer-state';
import { groupBox, NODE_SIZE, sizeOf, type XY } from './orch-doc';
import { STEP_DRAG_TYPE } from './palette';

/** Everything already on the canvas, as rectangles in flow coordinates. */
export function occupiedRects(m: Model): Rect[] {
  const rects: Rect[] = m.doc.nodes.filter((n) => m.positions[n.id]).map((n) => ({ ...m.positions[n.id]!, ...sizeOf(m.sizes, n.id) }));
  for (const g of m.doc.groups ?? []) {
    const box = groupBox(g, m.positions, m.sizes);
    if (box) rects.push(box);
  }
  return rects;
}

export function useAddStep(canvas: RefObject<HTMLDivElement | null>, model: Model, dispatch: Dispatch<Action>, canAdd: (code: string) => boolean) {
  const rf = useReactFlow();

  const addAtFreeSpot = (code: string) => {
    if (!canAdd(code)) return;
    const occupied = occupiedRects(model);
    const el = canvas.current;
    let at: XY | null = null;
    if (el) {
      const r = el.getBoundingClientRect();
      const tl = rf.screenToFlowPosition({ x: r.left, y: r.top });
      const br = rf.screenToFlowPosition({ x: r.right, y: r.bottom });
      const inset = 24 / rf.getZoom();
      // Leave room on the left for the zoom controls.
      const left = 56 / rf.getZoom();
      // and above for a group's label.
      const top = 48 / rf.getZoom();
      at = freePosition(occupied, { x: tl.x + left, y: tl.y + top, width: br.x - tl.x - left - inset, height: br.y - tl.y - top - inset });
    }
    if (at) {
      dispatch({ type: 'add-node', step: code, at });
      return;
    }
    // The view is full: put it beside everything and zoom out to show the whole chain.
    dispatch({ type: 'add-node', step: code, at: besideAll(occupied) });
    setTimeout(() => void rf.fitView({ maxZoom: 1, padding: 0.15 }), 60);
  };

  const onDragOver = (e: DragEvent) => {
    if (!e.dataTransfer.types.includes(STEP_DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  };

  const onDrop = (e: DragEvent) => {
    const code = e.dataTransfer.getData(STEP_DRAG_TYPE);
    if (!code) return;
    e.preventDefault();
    if (!canAdd(code)) return;
    const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    dispatch({ type: 'add-node', step: code, at: { x: Math.round(p.x - NODE_SIZE.width / 2), y: Math.round(p.y - NODE_SIZE.height / 2) } });
  };

  return { addAtFreeSpot, onDragOver, onDrop };
}
