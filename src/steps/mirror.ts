import * as v from 'valibot';
import type { Dispatcher } from 'undici';
import { defineStep } from './step.js';

/** Drains and ignores the mirror's answer (errors too), and frees its place in the count. */
class MirrorCopy implements Dispatcher.DispatchHandler {
  constructor(private readonly count: { inFlight: number }) {}
  onRequestStart(): void {} // its presence tells undici this is a new-style handler
  onResponseStart(): void {}
  onResponseData(): void {}
  onResponseEnd(): void {
    this.count.inFlight--;
  }
  onResponseError(): void {
    this.count.inFlight--;
  }
}

/**
 * Sends a copy of a share of requests to another cluster and ignores its answers; the
 * copy is fired without waiting, so it never slows the main request. Requests with a
 * body are not mirrored (the body streams once, to the main upstream). At most
 * maxInFlight copies per worker are on their way; beyond that, copies are dropped.
 */
export const mirror = defineStep({
  code: 'mirror',
  summary: 'Copy a share of bodiless requests to another cluster, ignoring its answers',
  statuses: [],
  example: { cluster: 'shadow', percent: 10 },
  schema: v.strictObject({
    cluster: v.pipe(v.string(), v.minLength(1)),
    percent: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100)), 100),
    maxInFlight: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1024)), 32),
  }),
  clusterRefs: (s) => [{ pointer: '/cluster', name: s.cluster }],
  create(s, { tenant, env, state }) {
    const key = `${tenant}/${s.cluster}`;
    const random = env.random ?? Math.random;
    const count = state(() => ({ inFlight: 0 }));
    return (flow) => {
      // A slow or dead mirror must not pile copies up in memory, nor take the cluster's
      // connections from its own traffic: past maxInFlight copies are dropped.
      if (count.inFlight >= s.maxInFlight) return undefined;
      // Bodiless requests only (a body streams once, to the main upstream); Content-Length: 0 is bodiless.
      const length = flow.req.header('content-length');
      if ((length !== undefined && length !== '0') || flow.req.header('transfer-encoding') !== undefined) return undefined;
      if (s.percent < 100 && random() * 100 >= s.percent) return undefined;
      // What the main upstream gets: hop-by-hop headers dropped, X-Forwarded-* from the socket, edits applied.
      const p = flow.preview();
      const headers: string[] = [];
      for (const [k, val] of p.headers) headers.push(k, val);
      const upstream = env.upstream?.(key);
      if (upstream === undefined) return undefined;
      count.inFlight++;
      try {
        upstream.dispatch({ method: p.method as Dispatcher.HttpMethod, path: p.query === null ? p.path : `${p.path}?${p.query}`, headers, headersTimeout: 10_000, bodyTimeout: 10_000 }, new MirrorCopy(count));
      } catch {
        count.inFlight--; // refused before it was queued: a mirror never affects the main request
      }
      return undefined;
    };
  },
});
