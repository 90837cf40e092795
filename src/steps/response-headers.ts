import { defineStep, type ResponseHead } from './step.js';
import { HeaderEditSettings, lowerEntries } from './header-edit-settings.js';
import { applyPlanToHead, type EditPlan } from '../shared/header-edits.js';

/** Edits the headers the client receives (on upstream answers and on step replies alike). */
export const responseHeaders = defineStep({
  code: 'response-headers',
  summary: 'Set, add or remove response headers sent to the client',
  details: '`set` and `add` may not name `content-length` or a hop-by-hop header; `remove` may, and wins over `set`/`add` of the same name. Values may hold no control character but tab.',
  statuses: [],
  example: { set: { 'strict-transport-security': 'max-age=63072000' }, remove: ['server'] },
  schema: HeaderEditSettings,
  create(s) {
    const plan = responsePlan(s);
    const hook = (head: ResponseHead) => applyPlanToHead(head, plan);
    return (flow) => {
      flow.onResponse(hook);
      return undefined;
    };
  },
});

/**
 * The settings as one plan, compiled once: set, add, then remove, so a name also removed
 * ends up absent; the set values, then the added ones, follow the upstream's headers.
 * Built directly rather than through editPlan, which would put the adds first and keep
 * only the last of two `set` keys differing in case.
 */
function responsePlan(s: HeaderEditSettings): EditPlan {
  const removed = s.remove.map((n) => n.toLowerCase());
  const set = lowerEntries(s.set).filter(([k]) => !removed.includes(k));
  const add = lowerEntries(s.add).filter(([k]) => !removed.includes(k));
  const drop = [...new Set([...removed, ...set.map(([k]) => k)])];
  return { drop, tail: [...set, ...add].flat() };
}
