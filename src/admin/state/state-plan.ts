import { entityKey, isObject, type StateEntity } from './state-document.js';
import { pointerToken as escape } from '../../compiler/documents.js';
import type { FieldChange, Plan, PlanItem } from '../../contracts/state-plan.js';
import { runAll } from '../../shared/cpu-slices.js';

export type { FieldChange, Plan, PlanItem } from '../../contracts/state-plan.js';

/**
 * The fields that differ between two documents, as JSON pointers: objects compared field by
 * field, arrays index by index when their lengths agree, anything else as a whole.
 */
export function fieldChanges(a: unknown, b: unknown, at = ''): FieldChange[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => {
      const p = `${at}/${escape(k)}`;
      if (!(k in a)) return [{ pointer: p, new: b[k] }];
      if (!(k in b)) return [{ pointer: p, old: a[k] }];
      return fieldChanges(a[k], b[k], p);
    });
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((v, i) => fieldChanges(v, b[i], `${at}/${i}`));
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ pointer: at, old: a, new: b }];
}

/**
 * What applying `desired` over `current` does, entity by entity: creates and updates for
 * what the file holds, deletes for what it lacks only when `prune`; sorted by kind, then name.
 */
export function planState(current: readonly StateEntity[], desired: readonly StateEntity[], prune: boolean): Plan {
  return runAll(planStateSteps(current, desired, prune));
}

/** planState as steps, one entity each (runSliced). */
export function* planStateSteps(current: readonly StateEntity[], desired: readonly StateEntity[], prune: boolean): Generator<void, Plan> {
  const now = new Map(current.map((e) => [entityKey(e.kind, e.name), e]));
  const want = new Map(desired.map((e) => [entityKey(e.kind, e.name), e]));
  const items: PlanItem[] = [];
  for (const [key, e] of want) {
    const before = now.get(key);
    if (!before) items.push({ kind: e.kind, name: e.name, action: 'create' });
    else {
      const changes = fieldChanges(before.doc, e.doc);
      items.push(changes.length > 0 ? { kind: e.kind, name: e.name, action: 'update', changes } : { kind: e.kind, name: e.name, action: 'unchanged' });
    }
    yield;
  }
  if (prune) for (const [key, e] of now) if (!want.has(key)) items.push({ kind: e.kind, name: e.name, action: 'delete' });
  items.sort((x, y) => (x.kind === y.kind ? (x.name < y.name ? -1 : x.name > y.name ? 1 : 0) : x.kind < y.kind ? -1 : 1));
  const counts = { create: 0, update: 0, delete: 0, unchanged: 0 };
  for (const i of items) counts[i.action]++;
  return { items, counts, changed: counts.create + counts.update + counts.delete > 0 };
}
