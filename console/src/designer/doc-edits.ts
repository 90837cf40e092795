/**
 * Pure edits of an orch document. Each returns a new document (or a reason the edit
 * cannot be made) and keeps every field it does not concern.
 */
import { groupOf, nextId, usedIds, type OrchDoc, type OrchNode } from './orch-doc';

export function addNode(doc: OrchDoc, step: string, settings?: Record<string, unknown>): { doc: OrchDoc; id: string } {
  const id = nextId(doc, step);
  const node: OrchNode = settings ? { id, step, settings } : { id, step };
  return { doc: { ...doc, nodes: [...doc.nodes, node] }, id };
}

/** The unit a link end belongs to: its group when grouped, else itself. */
const unitOf = (doc: OrchDoc, id: string) => groupOf(doc, id)?.id ?? id;

export function addLink(doc: OrchDoc, from: string, to: string): OrchDoc | string {
  if (!from || !to) return 'choose both ends of the link';
  if (!usedIds(doc).has(from) || !usedIds(doc).has(to)) return 'a link joins two nodes or groups of this chain';
  if (from === to) return 'a link needs two different ends';
  if (unitOf(doc, from) === unitOf(doc, to)) return 'both ends are in the same group, which runs its members concurrently';
  if (doc.links.some((l) => l.from === from && l.to === to)) return `there is already a link ${from} → ${to}`;
  return { ...doc, links: [...doc.links, { from, to }] };
}

export interface Removal {
  nodes?: Iterable<string>;
  groups?: Iterable<string>;
  links?: Iterable<number>;
}

/**
 * Removes nodes (with their links and group memberships), groups (their members stay,
 * links to the group go) and links by index, all against the same starting document.
 */
export function removeElements(doc: OrchDoc, what: Removal): OrchDoc {
  const nodes = new Set(what.nodes ?? []);
  const groups = new Set(what.groups ?? []);
  const links = new Set(what.links ?? []);
  let nextGroups = doc.groups?.filter((g) => !groups.has(g.id)).map((g) => ({ ...g, nodes: g.nodes.filter((id) => !nodes.has(id)) }));
  // A group left without members goes too.
  for (const g of nextGroups ?? []) if (!g.nodes.length) groups.add(g.id);
  nextGroups = nextGroups?.filter((g) => g.nodes.length);
  const gone = (id: string) => nodes.has(id) || groups.has(id);
  const out: OrchDoc = {
    ...doc,
    nodes: doc.nodes.filter((n) => !nodes.has(n.id)),
    links: doc.links.filter((l, i) => !links.has(i) && !gone(l.from) && !gone(l.to)),
  };
  if (nextGroups) out.groups = nextGroups;
  return out;
}

/**
 * Puts `ids` (in nodes[] order) into a new group `group-<n>`; members leave any group
 * they were in. Links between the new members would stay inside one unit and are dropped.
 */
export function groupNodes(doc: OrchDoc, ids: string[], merge: string): { doc: OrchDoc; groupId: string } | string {
  const wanted = new Set(ids);
  const members = doc.nodes.map((n) => n.id).filter((id) => wanted.has(id));
  if (members.length < 2) return 'select two or more nodes to group';
  const groupId = nextId(doc, 'group');
  const groups = (doc.groups ?? [])
    .map((g) => ({ ...g, nodes: g.nodes.filter((id) => !wanted.has(id)) }))
    .filter((g) => g.nodes.length);
  const emptied = new Set((doc.groups ?? []).map((g) => g.id).filter((id) => !groups.some((g) => g.id === id)));
  const links = doc.links.filter((l) => !(wanted.has(l.from) && wanted.has(l.to)) && !emptied.has(l.from) && !emptied.has(l.to));
  return { doc: { ...doc, links, groups: [...groups, { id: groupId, nodes: members, merge }] }, groupId };
}

export function updateNode(doc: OrchDoc, id: string, change: (n: OrchNode) => OrchNode): OrchDoc {
  return { ...doc, nodes: doc.nodes.map((n) => (n.id === id ? change(n) : n)) };
}

export function setGroupMerge(doc: OrchDoc, groupId: string, merge: string | undefined): OrchDoc {
  return {
    ...doc,
    groups: doc.groups?.map((g) => {
      if (g.id !== groupId) return g;
      const { merge: _old, ...rest } = g;
      return merge ? { ...g, merge } : rest;
    }),
  };
}

/** Renames a node everywhere it is referred to (links, group members). */
export function renameNode(doc: OrchDoc, from: string, to: string): OrchDoc | string {
  const id = to.trim();
  if (!id) return 'a node id cannot be empty';
  if (id === from) return doc;
  if (usedIds(doc).has(id)) return `${id} is already a node or group id`;
  const swap = (x: string) => (x === from ? id : x);
  return {
    ...doc,
    nodes: doc.nodes.map((n) => (n.id === from ? { ...n, id } : n)),
    links: doc.links.map((l) => (l.from === from || l.to === from ? { ...l, from: swap(l.from), to: swap(l.to) } : l)),
    ...(doc.groups ? { groups: doc.groups.map((g) => (g.nodes.includes(from) ? { ...g, nodes: g.nodes.map(swap) } : g)) } : {}),
  };
}
