import * as v from 'valibot';
import { defineStep, type StepOutcome } from './step.js';
import { HeaderName, HttpUrl, REFUSED, subRequest } from './sub-request.js';
import { isFieldValue } from '../shared/field-value.js';
import { HOP_BY_HOP } from '../shared/hop-by-hop.js';
import { refusedBeforeSending } from '../shared/upstream-refusal.js';
import { stepError } from './reply.js';

/**
 * Asks an auth service about each request (copying the chosen request headers; the
 * method and the target as the upstream will receive it go as X-Forwarded-Method/-Uri). A 2xx lets the request on,
 * with the chosen answer headers copied into it (and the client's own values of those
 * headers dropped); any other status is returned to the client as the auth service gave
 * it, with its headers (WWW-Authenticate, Location, …). An unreachable or slow service
 * (timeoutMs bounds the whole call), or an identity header HTTP cannot carry: 503.
 */
export const forwardAuth = defineStep({
  code: 'forward-auth',
  summary: 'Ask an auth service; 2xx continues (copying chosen headers), else its answer is returned',
  details: 'The call carries `X-Forwarded-Method` and `X-Forwarded-Uri`: the path and query as the upstream will receive them when the step runs (after an earlier `path-rewrite`, without a key an earlier `key-auth` removed), and the `requestHeaders` as they stand then.',
  statuses: [
    { status: 0, when: "the auth service's own non-2xx status and body" },
    { status: 503, when: 'the auth service cannot be reached in time' },
    { status: 400, when: 'a copied header (or the path) holds a byte HTTP does not allow, so the call cannot be made (Svc.Data.BadRequest)' },
  ],
  example: { url: 'http://127.0.0.1:9000/verify', requestHeaders: ['authorization', 'cookie'], upstreamHeaders: ['x-user-id'] },
  schema: v.strictObject({
    url: HttpUrl,
    method: v.optional(v.picklist(['GET', 'POST', 'HEAD']), 'GET'),
    requestHeaders: v.optional(v.array(HeaderName), ['authorization', 'cookie']),
    upstreamHeaders: v.optional(v.array(HeaderName), []),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000)), 2_000),
  }),
  ownedHeaders: (s) => s.upstreamHeaders,
  urlRefs: (s) => [{ pointer: '/url', url: s.url }],
  create(s, ctx) {
    const copy = s.requestHeaders.map((h) => h.toLowerCase());
    const pass = s.upstreamHeaders.map((h) => h.toLowerCase());
    const unavailable = stepError('Svc.Data.AuthUnavailable');
    return async (flow): Promise<StepOutcome> => {
      let r;
      try {
        r = await subRequest(ctx.env, ctx.tenant, s.url, s.method, flow, copy, s.timeoutMs);
      } catch (err) {
        return refusedBeforeSending(err) ? REFUSED : unavailable;
      }
      if (r.status < 200 || r.status >= 300) return { status: r.status, headers: relayed(r.headers), body: r.body };
      // The named headers come from the auth service or not at all: a client's own
      // X-User-Id must not reach the upstream when the service did not set one.
      const values: [string, string][] = [];
      for (const h of pass) {
        const val = r.headers[h];
        const text = Array.isArray(val) ? val.join(', ') : val;
        if (text === undefined) continue;
        if (!isFieldValue(text)) return unavailable; // a broken identity fails closed
        values.push([h, text]);
      }
      // The client's own values of these never go upstream (ownedHeaders, dropped by the route).
      for (const [h, text] of values) flow.setHeader(h, text);
      return undefined;
    };
  },
});

/** Headers of a refusal that reach the client (WWW-Authenticate, Location, Set-Cookie, …); framing and hop-by-hop ones do not. */
const NOT_RELAYED = new Set([...HOP_BY_HOP, 'content-length', 'date', 'server']);

function relayed(headers: Record<string, string | string[] | undefined>): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, val] of Object.entries(headers)) {
    if (val === undefined || NOT_RELAYED.has(k)) continue;
    // Every Set-Cookie line on its own (joined, cookies break); other repeats as one list.
    const values = Array.isArray(val) ? (k === 'set-cookie' ? val : [val.join(', ')]) : [val];
    for (const text of values) if (isFieldValue(text)) out.push([k, text]);
  }
  return out;
}
