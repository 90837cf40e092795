import { defineStep } from './step.js';
import { HeaderEditSettings, lowerEntries } from './header-edit-settings.js';

/** Edits the headers the upstream receives: set replaces, add appends, remove drops. */
export const requestHeaders = defineStep({
  code: 'request-headers',
  summary: 'Set, add or remove request headers sent to the upstream',
  details: '`set` and `add` may not name `content-length` or a hop-by-hop header (`connection`, `transfer-encoding`, `te`, `trailer`, `upgrade`, `keep-alive`, `proxy-*`): the gateway frames the message. `remove` may. Values may hold no control character but tab.',
  statuses: [],
  example: { set: { 'x-env': 'prod' }, add: { via: 'switchyard' }, remove: ['cookie'] },
  schema: HeaderEditSettings,
  create(s) {
    const set = lowerEntries(s.set);
    const add = lowerEntries(s.add);
    const remove = s.remove.map((n) => n.toLowerCase());
    // Index loops: destructuring in for-of makes an iterator per entry, per request.
    return (flow) => {
      for (let i = 0; i < set.length; i++) flow.setHeader(set[i]![0], set[i]![1]);
      for (let i = 0; i < add.length; i++) flow.addHeader(add[i]![0], add[i]![1]);
      for (let i = 0; i < remove.length; i++) flow.removeHeader(remove[i]!);
      return undefined;
    };
  },
});
