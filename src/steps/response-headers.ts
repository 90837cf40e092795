import { defineStep, type ResponseHead } from './step.js';
import { HeaderEdits, lowerEntries } from './header-edits.js';

/** Edits the headers the client receives (on upstream answers and on step replies alike). */
export const responseHeaders = defineStep({
  code: 'response-headers',
  summary: 'Set, add or remove response headers sent to the client',
  statuses: [],
  example: { set: { 'strict-transport-security': 'max-age=63072000' }, remove: ['server'] },
  schema: HeaderEdits,
  create(s) {
    const set = lowerEntries(s.set);
    const add = lowerEntries(s.add);
    const drop = new Set([...s.remove.map((n) => n.toLowerCase()), ...set.map(([k]) => k)]);
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
