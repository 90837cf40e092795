import * as v from 'valibot';
import { defineStep, type StepReply } from './step.js';

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
    const refused: StepReply = { status: 403, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'Svc.Data.CorsDenied', message: 'Origin not allowed' }) };
    return (flow) => {
      const origin = flow.req.header('origin');
      if (origin === undefined) return undefined;
      const ok = any || allowed.has(origin.toLowerCase());
      if (flow.req.method === 'OPTIONS' && flow.req.header('access-control-request-method') !== undefined) {
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
        };
      }
      if (ok) {
        flow.addResponseHeader('access-control-allow-origin', allowOrigin(origin));
        for (let i = 0; i < fixed.length; i++) flow.addResponseHeader(fixed[i]![0], fixed[i]![1]);
        if (expose !== null) flow.addResponseHeader('access-control-expose-headers', expose);
      }
      return undefined;
    };
  },
});
