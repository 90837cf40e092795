import * as v from 'valibot';
import type { Dispatcher } from 'undici';
import { defineStep } from './step.js';
import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';

/** Drains and ignores the mirror's answer; errors are ignored too. */
const IGNORE: Dispatcher.DispatchHandler = {
  onRequestStart() {}, // its presence tells undici this is a new-style handler
  onResponseStart() {},
  onResponseData() {},
  onResponseEnd() {},
  onResponseError() {},
};

/**
 * Sends a copy of a share of requests to another cluster and ignores its answers; the
 * copy is fired without waiting, so it never slows the main request. Requests with a
 * body are not mirrored (the body streams once, to the main upstream).
 */
export const mirror = defineStep({
  code: 'mirror',
  summary: 'Copy a share of bodiless requests to another cluster, ignoring its answers',
  statuses: [],
  example: { cluster: 'shadow', percent: 10 },
  schema: v.strictObject({
    cluster: v.pipe(v.string(), v.minLength(1)),
    percent: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100)), 100),
  }),
  clusterRefs: (s) => [{ pointer: '/cluster', name: s.cluster }],
  create(s, { tenant, env }) {
    const key = `${tenant}/${s.cluster}`;
    const random = env.random ?? Math.random;
    return (flow) => {
      if (flow.req.header('content-length') !== undefined || flow.req.header('transfer-encoding') !== undefined) return undefined;
      if (s.percent < 100 && random() * 100 >= s.percent) return undefined;
      const p = flow.preview();
      const headers: string[] = [];
      const listed = connectionListed(flow.req.header('connection'));
      for (const [k, val] of p.headers) if (!HOP_BY_HOP.has(k) && !listed?.has(k)) headers.push(k, val);
      try {
        env.upstream?.(key).dispatch({ method: p.method as Dispatcher.HttpMethod, path: p.query === null ? p.path : `${p.path}?${p.query}`, headers, headersTimeout: 10_000, bodyTimeout: 10_000 }, IGNORE);
      } catch {
        // a mirror never affects the main request
      }
      return undefined;
    };
  },
});
