import * as v from 'valibot';
import { REDACTED, redactQuery } from '../shared/redact-query.js';
import { defineStep } from './step.js';
import { credentialNames } from '../shared/query-credential.js';
import type { QueryPair } from '../shared/url-query.js';

/**
 * Names whose values are credentials more often than not: their values never reach the
 * log (`[redacted]`), in the query and in the logged headers alike.
 */
const SENSITIVE = /key|token|secret|pass|auth|sig|session|cookie|credential|code/i;

/**
 * One JSON log line per (sampled) request of the route, written when the exchange ends.
 * Plaintext credentials never reach the log: values of query parameters and headers
 * whose names look like credentials, or that `redact` names, are written as [redacted].
 */
export const accessLog = defineStep({
  code: 'access-log',
  summary: 'Log one line per request of this route (sampled), with status and duration',
  details: 'A line holds `route`, `method`, `path`, `query`, `status`, `ms`, `client` (the client address: the socket peer, or behind a proxy in worker.json `trustedProxies` the client it reports in X-Forwarded-For), `peer` (the socket peer), the chosen `headers` and `requestId` when `request-id` set one. Values of query parameters and chosen headers whose names look like credentials (`key`, `token`, `secret`, …), or that `redact` names, are written `[redacted]`; a `redact` name covers every query name `key-auth` would read as it (`api.key`, `api_key[]`, `api%5Fkey` for `api_key`).',
  statuses: [],
  example: { sampleRate: 0.1, headers: ['user-agent', 'referer'], redact: ['sid'] },
  schema: v.strictObject({
    sampleRate: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 1),
    headers: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+$/))), []),
    redact: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  }),
  create(s, { bucket, env }) {
    const random = env.random ?? Math.random;
    const route = bucket.slice(0, bucket.indexOf('#'));
    const names = s.headers.map((h) => h.toLowerCase());
    const extra = new Set(s.redact.map((n) => n.toLowerCase()));
    const secret = (name: string) => SENSITIVE.test(name) || extra.has(name.toLowerCase());
    // A query name as key-auth reads a credential (`api.key`, `api_key[]` are `api_key`).
    const named = s.redact.length === 0 ? () => false : credentialNames(s.redact);
    const secretPair = (p: QueryPair) => SENSITIVE.test(p.name) || named(p);
    return (flow) => {
      if (s.sampleRate < 1 && random() >= s.sampleRate) return undefined;
      const started = performance.now();
      const req = flow.req;
      // Now: the socket is gone when the exchange ends.
      const peer = req.remoteAddress;
      const client = req.clientAddress;
      flow.onDone((status) => {
        const headers: Record<string, string | undefined> = {};
        for (const n of names) {
          const value = req.header(n);
          headers[n] = value !== undefined && secret(n) ? REDACTED : value;
        }
        env.log.info(
          { access: true, route, method: req.method, path: req.path, query: req.query === null ? null : redactQuery(req.query, secretPair, req.queryPairs), status, ms: Math.round((performance.now() - started) * 100) / 100, client, peer, headers, ...(flow.vars.requestId ? { requestId: flow.vars.requestId } : {}) },
          'access',
        );
      });
      return undefined;
    };
  },
});
