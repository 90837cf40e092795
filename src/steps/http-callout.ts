import * as v from 'valibot';
import { defineStep, type StepOutcome } from './step.js';
import { HeaderName, HttpUrl, REFUSED, subRequest } from './sub-request.js';
import { isFieldValue } from '../shared/field-value.js';
import { refusedBeforeSending } from '../shared/upstream-refusal.js';
import { stepError } from './reply.js';

const Pointer = v.pipe(v.string(), v.regex(/^(\/[^/]*)*$/, 'must be a JSON pointer'));

function at(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * Calls a service and maps fields of its JSON answer (JSON pointers) into request
 * headers for the upstream: the natural member of a parallel group. The mapped headers
 * carry the service's values only (a client's own are dropped). A failed call (an error,
 * timeoutMs over the whole call, non-2xx, not JSON, a value HTTP cannot carry) answers
 * 502, or is skipped with `optional`.
 */
export const httpCallout = defineStep({
  code: 'http-callout',
  summary: 'Call a service and map fields of its JSON answer into upstream request headers',
  statuses: [
    { status: 502, when: 'the service fails, times out or answers non-2xx / non-JSON (unless optional)' },
    { status: 400, when: 'a copied header (or the path) holds a byte HTTP does not allow, so the call cannot be made (Svc.Data.BadRequest; unless optional)' },
  ],
  example: { url: 'http://127.0.0.1:9100/profile', map: { 'x-user-tier': '/tier' }, requestHeaders: ['authorization'] },
  schema: v.strictObject({
    url: HttpUrl,
    method: v.optional(v.picklist(['GET', 'POST']), 'GET'),
    requestHeaders: v.optional(v.array(HeaderName), []),
    map: v.record(HeaderName, Pointer),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000)), 2_000),
    optional: v.optional(v.boolean(), false),
  }),
  ownedHeaders: (s) => Object.keys(s.map),
  urlRefs: (s) => [{ pointer: '/url', url: s.url }],
  create(s, ctx) {
    const copy = s.requestHeaders.map((h) => h.toLowerCase());
    const map = Object.entries(s.map).map(([h, p]) => [h.toLowerCase(), p] as const);
    const failed = stepError('Svc.Data.CalloutFailed', `The callout to ${new URL(s.url).host} failed`);
    return async (flow): Promise<StepOutcome> => {
      let doc: unknown;
      try {
        const r = await subRequest(ctx.env, ctx.tenant, s.url, s.method, flow, copy, s.timeoutMs);
        if (r.status < 200 || r.status >= 300) throw new Error(`status ${r.status}`);
        doc = JSON.parse(r.body);
      } catch (err) {
        if (s.optional) return undefined;
        return refusedBeforeSending(err) ? REFUSED : failed;
      }
      // The mapped headers come from the service or not at all (never the client's own).
      const values: [string, string][] = [];
      for (const [header, pointer] of map) {
        const val = at(doc, pointer);
        if (val === undefined || val === null) continue;
        const text = typeof val === 'string' ? val : JSON.stringify(val);
        if (!isFieldValue(text)) {
          // A value HTTP cannot carry is the service's fault: a failed call, not the client's.
          values.length = 0;
          if (!s.optional) return failed;
          break;
        }
        values.push([header, text]);
      }
      // The client's own values of these never go upstream (ownedHeaders, dropped by the route).
      for (const [header, text] of values) flow.setHeader(header, text);
      return undefined;
    };
  },
});
