import * as v from 'valibot';
import { defineStep, type ResponseHead } from './step.js';
import { stepError } from './reply.js';

const Method = v.pipe(v.string(), v.regex(/^[A-Z]+$/));

/**
 * CORS at the gateway: preflights (OPTIONS with Access-Control-Request-Method) are
 * answered here and never reach the upstream; other requests from an allowed origin get
 * the CORS response headers. Origins not on the list get no CORS headers (the browser
 * then blocks them) and their preflight is refused with 403.
 */
export const cors = defineStep({
  code: 'cors',
  summary: 'Answer CORS preflights and add CORS headers for allowed origins',
  details: 'With `headers` empty (the default) a preflight from an allowed origin is granted the request headers it asks for (`Access-Control-Request-Headers` is echoed); list them to allow only those. Origins not on the list get no CORS headers at all, the upstream\'s own included.',
  statuses: [{ status: 204, when: 'a preflight from an allowed origin' }, { status: 403, when: 'a preflight from another origin' }],
  example: { origins: ['https://app.example.com'], credentials: true, maxAgeSeconds: 600 },
  schema: v.strictObject({
    origins: v.pipe(v.array(v.pipe(v.string(), v.regex(/^(\*|https?:\/\/[^/\s]+)$/, 'must be * or scheme://host[:port]'))), v.minLength(1)),
    methods: v.optional(v.array(Method), ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']),
    headers: v.optional(v.array(v.string()), []),
    exposeHeaders: v.optional(v.array(v.string()), []),
    credentials: v.optional(v.boolean(), false),
    maxAgeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 600),
  }),
  create(s) {
    const any = s.origins.includes('*');
    const allowed = new Set(s.origins.map((o) => o.toLowerCase()));
    // With credentials a wildcard must be answered with the request's own origin.
    const allowOrigin = (origin: string) => (any && !s.credentials ? '*' : origin);
    // After Access-Control-Allow-Origin, on preflights and on other answers alike.
    const fixed: [string, string][] = [['vary', 'Origin']];
    if (s.credentials) fixed.push(['access-control-allow-credentials', 'true']);
    const fixedRecord = Object.fromEntries(fixed);
    const common = (origin: string): Record<string, string> => ({ 'access-control-allow-origin': allowOrigin(origin), ...fixedRecord });
    const expose = s.exposeHeaders.length ? s.exposeHeaders.join(', ') : null;
    const refused = stepError('Svc.Data.CorsDenied');
    // The answer depends on the Origin unless it is a plain `*`: say so on every answer,
    // also those to other or no origins, or a shared cache may hand one origin's answer
    // to another (Fetch, "CORS protocol and HTTP caches").
    const varies = !any || s.credentials;
    return (flow) => {
      const origin = flow.req.header('origin');
      const ok = origin !== undefined && (any || allowed.has(origin.toLowerCase()));
      const preflight = origin !== undefined && flow.req.method === 'OPTIONS' && flow.req.header('access-control-request-method') !== undefined;
      if (preflight) {
        if (!ok) return refused;
        const requested = flow.req.header('access-control-request-headers');
        return {
          status: 204,
          headers: {
            ...common(origin),
            'access-control-allow-methods': s.methods.join(', '),
            'access-control-allow-headers': s.headers.length ? s.headers.join(', ') : (requested ?? ''),
            'access-control-max-age': String(s.maxAgeSeconds),
          },
          body: '',
          served: true,
        };
      }
      if (!ok) {
        // An origin not on the list gets no CORS headers, the upstream's own included
        // (an app that reflects Origin would otherwise grant any site credentialed reads).
        if (origin !== undefined) flow.onResponse(dropUpstreamCors);
        if (varies) flow.addResponseHeader('vary', 'Origin');
        return undefined;
      }
      // Ours replace any the upstream sent: two Allow-Origin values fail the browser's check.
      flow.onResponse(dropUpstreamCors);
      flow.addResponseHeader('access-control-allow-origin', allowOrigin(origin));
      for (let i = 0; i < fixed.length; i++) flow.addResponseHeader(fixed[i]![0], fixed[i]![1]);
      if (expose !== null) flow.addResponseHeader('access-control-expose-headers', expose);
      return undefined;
    };
  },
});

/** Removes the upstream's own CORS answer headers (no allocation when it sent none). */
function dropUpstreamCors(head: ResponseHead): void {
  const h = head.headers;
  for (let i = 0; i < h.length; i++) {
    if (h[i]![0].startsWith('access-control-')) {
      head.headers = h.filter(([k]) => !k.startsWith('access-control-'));
      return;
    }
  }
}
