import { defineStep } from './step.js';
import { HeaderEdits, lowerEntries } from './header-edits.js';

/** Edits the headers the upstream receives: set replaces, add appends, remove drops. */
export const requestHeaders = defineStep({
  code: 'request-headers',
  summary: 'Set, add or remove request headers sent to the upstream',
  statuses: [],
  example: { set: { 'x-env': 'prod' }, add: { via: 'switchyard' }, remove: ['cookie'] },
  schema: HeaderEdits,
  create(s) {
    const set = lowerEntries(s.set);
    const add = lowerEntries(s.add);
    const remove = s.remove.map((n) => n.toLowerCase());
    return (flow) => {
      for (const [k, val] of set) flow.setHeader(k, val);
      for (const [k, val] of add) flow.addHeader(k, val);
      for (const k of remove) flow.removeHeader(k);
      return undefined;
    };
  },
});
