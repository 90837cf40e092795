/**
 * The orch document as the server stores it, and the pure conversions the designer
 * needs around it. The designer keeps the document itself as its model: fields the
 * canvas does not show (settings, failureStrategy, merge, anything else) stay as loaded,
 * and only `canvas` positions are added when it is written back.
 */

export interface XY {
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

export interface OrchNode {
  id: string;
  step: string;
  settings?: Record<string, unknown>;
  failureStrategy?: string;
  canvas?: XY;
  [other: string]: unknown;
}

export interface OrchLink {
  from: string;
  to: string;
  [other: string]: unknown;
}

export interface OrchGroup {
  id: string;
  nodes: string[];
  merge?: string;
  canvas?: XY;
  [other: string]: unknown;
}

export interface OrchDoc {
  nodes: OrchNode[];
  links: OrchLink[];
  groups?: OrchGroup[];
  [other: string]: unknown;
}

export const MERGES = ['all', 'any', 'first'] as const;
export const FAILURE_STRATEGIES = ['FailFast', 'Continue'] as const;

/** Default size of a node before the browser has measured it. */
export const NODE_SIZE: Size = { width: 200, height: 64 };
/** Room around the members of a group box. */
export const GROUP_PAD = { x: 16, top: 30, bottom: 16 };

export function emptyDoc(): OrchDoc {
  return { nodes: [], links: [] };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A loaded document made safe to render: arrays present, nothing else changed. */
export function normalizeDoc(raw: unknown): OrchDoc {
  if (!isObj(raw)) return emptyDoc();
  const doc: OrchDoc = { ...raw, nodes: [], links: [] } as OrchDoc;
  doc.nodes = Array.isArray(raw.nodes) ? raw.nodes.filter(isObj).map((n) => ({ ...n, id: String(n.id ?? ''), step: String(n.step ?? '') }) as OrchNode) : [];
  uniqueIds(doc.nodes);
  doc.links = Array.isArray(raw.links) ? raw.links.filter(isObj).map((l) => ({ ...l, from: String(l.from ?? ''), to: String(l.to ?? '') }) as OrchLink) : [];
  if (Array.isArray(raw.groups)) {
    doc.groups = raw.groups
      .filter(isObj)
      .map((g) => ({ ...g, id: String(g.id ?? ''), nodes: Array.isArray(g.nodes) ? g.nodes.map(String) : [] }) as OrchGroup);
  } else if ('groups' in doc) delete doc.groups;
  return doc;
}

/**
 * A document with two nodes of one id (a compile issue) must still be shown and fixed,
 * but the canvas keys nodes by id. Later duplicates get a free `-2`, `-3`… suffix; links and groups keep naming the first. The
 * dry-run's issue then sits on the renamed node (issues point at indexes), and a Save
 * writes the fix.
 */
function uniqueIds(nodes: OrchNode[]): void {
  const taken = new Set(nodes.map((n) => n.id));
  const seen = new Set<string>();
  for (const n of nodes) {
    if (seen.has(n.id)) {
      let k = 2;
      while (taken.has(`${n.id}-${k}`)) k++;
      n.id = `${n.id}-${k}`;
      taken.add(n.id);
    }
    seen.add(n.id);
  }
}

/** The group a node belongs to (the first one, should a broken document list it twice). */
export function groupOf(doc: OrchDoc, nodeId: string): OrchGroup | undefined {
  return doc.groups?.find((g) => g.nodes.includes(nodeId));
}

export function sizeOf(sizes: Record<string, Size>, id: string): Size {
  return sizes[id] ?? NODE_SIZE;
}

/** The box drawn around a group's members (flow coordinates), or null when none is placed. */
export function groupBox(group: OrchGroup, positions: Record<string, XY>, sizes: Record<string, Size>): (XY & Size) | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const id of group.nodes) {
    const p = positions[id];
    if (!p) continue;
    const s = sizeOf(sizes, id);
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x + s.width);
    y1 = Math.max(y1, p.y + s.height);
  }
  if (x0 === Infinity) return null;
  return { x: x0 - GROUP_PAD.x, y: y0 - GROUP_PAD.top, width: x1 - x0 + 2 * GROUP_PAD.x, height: y1 - y0 + GROUP_PAD.top + GROUP_PAD.bottom };
}

const round = (p: XY): XY => ({ x: Math.round(p.x), y: Math.round(p.y) });

/**
 * The document to write: the same nodes, links and groups in the same order with every
 * field kept, plus `canvas` positions of nodes and group boxes.
 */
export function toDocument(doc: OrchDoc, positions: Record<string, XY>, sizes: Record<string, Size>): OrchDoc {
  const out: OrchDoc = { ...doc, nodes: [], links: doc.links.map((l) => ({ ...l })) };
  out.nodes = doc.nodes.map((n) => {
    const p = positions[n.id];
    return p ? { ...n, canvas: round(p) } : { ...n };
  });
  if (doc.groups) {
    out.groups = doc.groups.map((g) => {
      const box = groupBox(g, positions, sizes);
      return box ? { ...g, canvas: round(box) } : { ...g };
    });
  }
  return out;
}

/** Ids of nodes and groups, which share one namespace in a chain. */
export function usedIds(doc: OrchDoc): Set<string> {
  return new Set([...doc.nodes.map((n) => n.id), ...(doc.groups ?? []).map((g) => g.id)]);
}

/** `<prefix>-<n>` with the smallest n ≥ 1 not yet used. */
export function nextId(doc: OrchDoc, prefix: string): string {
  const used = usedIds(doc);
  for (let n = 1; ; n++) if (!used.has(`${prefix}-${n}`)) return `${prefix}-${n}`;
}

/** xyflow ids: nodes keep their id, group boxes and links get prefixed ones. */
export const GROUP_PREFIX = 'grp~';
export const groupFlowId = (groupId: string) => GROUP_PREFIX + groupId;
export const isGroupFlowId = (id: string) => id.startsWith(GROUP_PREFIX);
export const groupIdOf = (flowId: string) => flowId.slice(GROUP_PREFIX.length);
export const edgeFlowId = (linkIndex: number) => `link-${linkIndex}`;
export const linkIndexOf = (edgeId: string) => Number(edgeId.slice('link-'.length));

/** The flow id a link end refers to: a node, else a group, else null (a dangling link). */
export function endpointFlowId(doc: OrchDoc, id: string): string | null {
  if (doc.nodes.some((n) => n.id === id)) return id;
  if (doc.groups?.some((g) => g.id === id)) return groupFlowId(id);
  return null;
}
