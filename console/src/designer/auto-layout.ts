/**
 * Positions for nodes that have none (chains written by the CLI or the API): layered
 * left to right by the depth of their unit in the link graph, group members stacked
 * vertically. Pure; nodes that already have a position keep it.
 */
import { GROUP_PAD, NODE_SIZE, type OrchDoc, type Size, type XY } from './orch-doc';

export const COLUMN_WIDTH = 264;
export const ROW_HEIGHT = 120;
const UNIT_GAP = 40;

interface Unit {
  key: string;
  members: string[];
  grouped: boolean;
  anchor?: XY;
}

/** Units (a group, or a node outside any group) in order of their first node in nodes[]. */
function unitsOf(doc: OrchDoc): { units: Unit[]; unitOf: Map<string, string> } {
  const unitOf = new Map<string, string>();
  const byKey = new Map<string, Unit>();
  for (const g of doc.groups ?? []) {
    unitOf.set(g.id, g.id);
    for (const id of g.nodes) if (!unitOf.has(id)) unitOf.set(id, g.id);
  }
  const units: Unit[] = [];
  for (const n of doc.nodes) {
    const key = unitOf.get(n.id) ?? n.id;
    unitOf.set(n.id, key);
    let u = byKey.get(key);
    if (!u) {
      const g = doc.groups?.find((x) => x.id === key);
      u = { key, members: [], grouped: !!g, anchor: g?.canvas };
      byKey.set(key, u);
      units.push(u);
    }
    u.members.push(n.id);
  }
  return { units, unitOf };
}

/** Longest-path depth of every unit; units caught in a cycle stay at the depth reached. */
function depths(doc: OrchDoc, units: Unit[], unitOf: Map<string, string>): Map<string, number> {
  const out = new Map<string, Set<string>>(units.map((u) => [u.key, new Set<string>()]));
  const indeg = new Map<string, number>(units.map((u) => [u.key, 0]));
  for (const l of doc.links) {
    const a = unitOf.get(l.from);
    const b = unitOf.get(l.to);
    if (!a || !b || a === b || !out.has(a) || !out.has(b) || out.get(a)!.has(b)) continue;
    out.get(a)!.add(b);
    indeg.set(b, indeg.get(b)! + 1);
  }
  const depth = new Map<string, number>(units.map((u) => [u.key, 0]));
  const ready = units.filter((u) => indeg.get(u.key) === 0).map((u) => u.key);
  while (ready.length) {
    const k = ready.shift()!;
    for (const next of out.get(k)!) {
      depth.set(next, Math.max(depth.get(next)!, depth.get(k)! + 1));
      indeg.set(next, indeg.get(next)! - 1);
      if (indeg.get(next) === 0) ready.push(next);
    }
  }
  return depth;
}

/** Every node's position: `fixed` where given, a layered layout for the rest. */
export function autoLayout(doc: OrchDoc, fixed: Record<string, XY> = {}): Record<string, XY> {
  const result: Record<string, XY> = {};
  const { units, unitOf } = unitsOf(doc);
  const depth = depths(doc, units, unitOf);
  const placed = Object.values(fixed);
  // Missing nodes go below whatever is already placed.
  const top = placed.length ? Math.max(...placed.map((p) => p.y)) + NODE_SIZE.height + 2 * UNIT_GAP : 0;
  const left = placed.length ? Math.min(...placed.map((p) => p.x)) : 0;
  const columnY = new Map<number, number>();
  for (const u of units) {
    const missing = u.members.filter((id) => !fixed[id]);
    for (const id of u.members) if (fixed[id]) result[id] = fixed[id];
    if (!missing.length) continue;
    if (u.grouped && u.anchor) {
      missing.forEach((id, i) => (result[id] = { x: u.anchor!.x + GROUP_PAD.x, y: u.anchor!.y + GROUP_PAD.top + i * ROW_HEIGHT }));
      continue;
    }
    const d = depth.get(u.key) ?? 0;
    const y = columnY.get(d) ?? top;
    const pad = u.grouped ? GROUP_PAD.top : 0;
    missing.forEach((id, i) => (result[id] = { x: left + d * COLUMN_WIDTH, y: y + pad + i * ROW_HEIGHT }));
    const height = missing.length * ROW_HEIGHT - (ROW_HEIGHT - NODE_SIZE.height) + (u.grouped ? GROUP_PAD.top + GROUP_PAD.bottom : 0);
    columnY.set(d, y + height + UNIT_GAP);
  }
  return result;
}

export interface Rect extends XY, Size {}

const overlaps = (a: Rect, b: Rect, margin: number) =>
  a.x < b.x + b.width + margin && b.x < a.x + a.width + margin && a.y < b.y + b.height + margin && b.y < a.y + a.height + margin;

/** Spacing of the grid new nodes are placed on. */
export const GRID = { x: NODE_SIZE.width + 48, y: NODE_SIZE.height + 64 };

/**
 * A spot for a new node overlapping none of `occupied`: the first free cell of a grid
 * laid over `area` (the part of the canvas on screen), row by row, left to right; or
 * null when the area is full.
 */
export function freePosition(occupied: Rect[], area: Rect, size: Size = NODE_SIZE): XY | null {
  const free = (p: XY) => !occupied.some((o) => overlaps({ ...p, ...size }, o, 16));
  for (let y = area.y; y + size.height <= area.y + area.height; y += GRID.y) {
    for (let x = area.x; x + size.width <= area.x + area.width; x += GRID.x) {
      const p = { x: Math.round(x), y: Math.round(y) };
      if (free(p)) return p;
    }
  }
  return null;
}

/** A spot right of everything on the canvas, for when the visible area is full. */
export function besideAll(occupied: Rect[]): XY {
  if (!occupied.length) return { x: 0, y: 0 };
  const right = Math.max(...occupied.map((o) => o.x + o.width));
  const top = Math.min(...occupied.map((o) => o.y));
  return { x: Math.round(right + GRID.x - NODE_SIZE.width), y: Math.round(top) };
}
