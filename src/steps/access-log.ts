import * as v from 'valibot';
import { defineStep } from './step.js';

/** One JSON log line per (sampled) request of the route, written when the exchange ends. */
export const accessLog = defineStep({
  code: 'access-log',
  summary: 'Log one line per request of this route (sampled), with status and duration',
  statuses: [],
  example: { sampleRate: 0.1, headers: ['user-agent', 'referer'] },
  schema: v.strictObject({
    sampleRate: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 1),
    headers: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/))), []),
  }),
  create(s, { bucket, env }) {
    const random = env.random ?? Math.random;
    const route = bucket.slice(0, bucket.indexOf('#'));
    const names = s.headers.map((h) => h.toLowerCase());
    return (flow) => {
      if (s.sampleRate < 1 && random() >= s.sampleRate) return undefined;
      const started = performance.now();
      const req = flow.req;
      const peer = req.remoteAddress; // now: the socket is gone when the exchange ends
      flow.onDone((status) => {
        const headers: Record<string, string | undefined> = {};
        for (const n of names) headers[n] = req.header(n);
        env.log.info(
          { access: true, route, method: req.method, path: req.url, query: req.query, status, ms: Math.round((performance.now() - started) * 100) / 100, peer, headers, ...(flow.vars.requestId ? { requestId: flow.vars.requestId } : {}) },
          'access',
        );
      });
      return undefined;
    };
  },
});
