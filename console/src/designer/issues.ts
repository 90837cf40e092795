/**
 * Server findings (dry-run issues, config set field errors) placed on what they concern:
 * `/nodes/<i>/…` on node i, `/groups/<g>/…` on group g, `/links/<l>/…` on link l,
 * anything else on the chain. Indexes are resolved against the document the server
 * checked, then kept as ids so later edits do not move a finding to another node.
 */
import type { CompileIssue } from '../api';
import type { OrchDoc } from './orch-doc';

export type IssueTarget =
  | { type: 'node'; id: string; sub: string }
  | { type: 'group'; id: string; sub: string }
  | { type: 'link'; from: string; to: string; sub: string }
  | { type: 'chain'; sub: string };

export interface ShownIssue {
  code: string;
  message: string;
  pointer: string;
  target: IssueTarget;
}

const unescape = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export function splitPointer(pointer: string): string[] {
  if (!pointer || pointer === '/') return [];
  return pointer.replace(/^\//, '').split('/').map(unescape);
}

export function joinPointer(parts: string[]): string {
  return parts.map((p) => '/' + escape(p)).join('');
}

/** What a JSON pointer into `doc` concerns. */
export function targetOf(pointer: string, doc: OrchDoc): IssueTarget {
  const [head, index, ...rest] = splitPointer(pointer);
  const i = Number(index);
  const sub = joinPointer(rest);
  if (index !== undefined && Number.isInteger(i) && i >= 0) {
    if (head === 'nodes' && doc.nodes[i]) return { type: 'node', id: doc.nodes[i]!.id, sub };
    if (head === 'groups' && doc.groups?.[i]) return { type: 'group', id: doc.groups[i]!.id, sub };
    if (head === 'links' && doc.links[i]) return { type: 'link', from: doc.links[i]!.from, to: doc.links[i]!.to, sub };
  }
  return { type: 'chain', sub: pointer };
}

/** The dry-run issues about this chain (kind orch, this name). */
export function chainIssues(issues: readonly CompileIssue[], name: string): CompileIssue[] {
  return issues.filter((i) => i.kind === 'orch' && i.name === name);
}

export function resolveIssues(issues: readonly { code: string; message: string; pointer: string }[], doc: OrchDoc): ShownIssue[] {
  return issues.map((i) => ({ code: i.code, message: i.message, pointer: i.pointer, target: targetOf(i.pointer, doc) }));
}

/** Config set field errors ({path, message}) as findings. */
export function fieldErrorsAsIssues(errors: readonly { path: string; message: string }[], code: string, doc: OrchDoc): ShownIssue[] {
  return resolveIssues(errors.map((e) => ({ code, message: e.message, pointer: e.path })), doc);
}

export interface IssueIndex {
  byNode: Map<string, ShownIssue[]>;
  byGroup: Map<string, ShownIssue[]>;
  /** Keyed by link index in the current document. */
  byLink: Map<number, ShownIssue[]>;
  chain: ShownIssue[];
}

function push<K>(m: Map<K, ShownIssue[]>, k: K, v: ShownIssue) {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** Findings grouped by what they sit on in the current document. */
export function indexIssues(issues: readonly ShownIssue[], doc: OrchDoc): IssueIndex {
  const idx: IssueIndex = { byNode: new Map(), byGroup: new Map(), byLink: new Map(), chain: [] };
  for (const issue of issues) {
    const t = issue.target;
    if (t.type === 'node' && doc.nodes.some((n) => n.id === t.id)) push(idx.byNode, t.id, issue);
    else if (t.type === 'group' && doc.groups?.some((g) => g.id === t.id)) push(idx.byGroup, t.id, issue);
    else if (t.type === 'link' && doc.links.some((l) => l.from === t.from && l.to === t.to)) {
      push(idx.byLink, doc.links.findIndex((l) => l.from === t.from && l.to === t.to), issue);
    } else idx.chain.push(issue);
  }
  return idx;
}

/** Field messages for a settings form: pointers relative to `settings`. */
export function settingsErrors(issues: readonly ShownIssue[] | undefined): { pointer: string; message: string }[] {
  return (issues ?? [])
    .filter((i) => i.target.type === 'node' && (i.target.sub === '/settings' || i.target.sub.startsWith('/settings/')))
    .map((i) => ({ pointer: (i.target as { sub: string }).sub.slice('/settings'.length), message: `${i.code}: ${i.message}` }));
}
