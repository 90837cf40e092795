import { defineStep, type ResponseHead } from './step.js';
import { HeaderEdits, lowerEntries } from './header-edits.js';

/** Edits the headers the client receives (on upstream answers and on step replies alike). */
export const responseHeaders = defineStep({
  code: 'response-headers',
  summary: 'Set, add or remove response headers sent to the client',
  details: '`set` and `add` may not name `content-length` or a hop-by-hop header; `remove` may, and wins over `set`/`add` of the same name. Values may hold no control character but tab.',
  statuses: [],
  example: { set: { 'strict-transport-security': 'max-age=63072000' }, remove: ['server'] },
  schema: HeaderEdits,
  create(s) {
    // Applied in order: set, add, then remove; so a name also removed ends up absent.
    const removed = new Set(s.remove.map((n) => n.toLowerCase()));
    const set = lowerEntries(s.set).filter(([k]) => !removed.has(k));
    const add = lowerEntries(s.add).filter(([k]) => !removed.has(k));
    const drop = new Set([...removed, ...set.map(([k]) => k)]);
    const hook = (head: ResponseHead) => {
      if (drop.size) head.headers = head.headers.filter(([k]) => !drop.has(k));
      for (const h of set) head.headers.push(h);
      for (const h of add) head.headers.push(h);
    };
    return (flow) => {
      flow.onResponse(hook);
      return undefined;
    };
  },
});
