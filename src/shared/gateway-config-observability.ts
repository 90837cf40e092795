import { resolve } from 'node:path';
import * as v from 'valibot';
import type { ObserveSettings } from '../contracts/ipc.js';
import type { GatewayConfig } from './gateway-config-schema.js';
import { HOP_BY_HOP } from './hop-by-hop.js';

const HeaderName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name'));
const EnvName = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));

/** The fields an access log line may hold, in the order a JSON line writes them. */
export const ACCESS_LOG_FIELDS = [
  'time',
  'requestId',
  'tenant',
  'route',
  'method',
  'path',
  'status',
  'grpcStatus',
  'bytesReceived',
  'bytesSent',
  'durationMs',
  'upstream',
  'upstreamMs',
  'client',
  'userAgent',
  'referer',
  'traceId',
] as const;

export type AccessLogField = (typeof ACCESS_LOG_FIELDS)[number];

/**
 * Query parameters whose values an access line writes as `[redacted]` unless `redactQuery`
 * replaces the list: names that hold credentials more often than not.
 */
export const REDACT_QUERY_DEFAULT = ['access_token', 'api_key', 'apikey', 'key', 'token', 'password', 'secret', 'signature', 'sig', 'code'];

/** worker.json `log.access`: one line per (sampled) request of every route. Off unless enabled. */
export const AccessLogSchema = v.optional(
  v.strictObject({
    enabled: v.optional(v.boolean(), false),
    format: v.optional(v.picklist(['json', 'combined']), 'json'),
    /** The share of requests logged, 0..1. */
    sample: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 1),
    /** JSON lines: only these fields (default: all). */
    fields: v.optional(v.pipe(v.array(v.picklist(ACCESS_LOG_FIELDS)), v.minLength(1))),
    /** A file (relative to worker.json's folder), reopened on SIGHUP for logrotate; default: stdout. */
    path: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** Query parameter names (case-insensitive) whose values are redacted. */
    redactQuery: v.optional(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(128))), REDACT_QUERY_DEFAULT),
  }),
  {},
);

/** worker.json `metrics`: the data plane's Prometheus series on the admin port's /metrics. On by default. */
export const MetricsSchema = v.optional(v.strictObject({ enabled: v.optional(v.boolean(), true) }), {});

/** Headers that frame a message, route it or name its client: an id in one would break requests (`content-length: w0-…`). */
const NOT_AN_ID_HEADER = new Set([...HOP_BY_HOP, 'host', 'content-length', 'content-type', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'forwarded', 'traceparent', 'tracestate', 'date', 'cookie', 'set-cookie', 'authorization']);
const IdHeaderName = v.pipe(
  HeaderName,
  v.check((h) => !NOT_AN_ID_HEADER.has(h.toLowerCase()), 'must be a header of its own, not one that frames, routes or authenticates a request'),
);

/**
 * worker.json `requestId`: every request gets an id, sent upstream, echoed to the client,
 * in the access log and in error envelopes' `traceId`. An incoming one is kept only when
 * well-formed and `trustIncoming` allows it (`trusted-proxies`: from a peer in `trustedProxies`).
 */
export const RequestIdSchema = v.optional(
  v.strictObject({
    enabled: v.optional(v.boolean(), true),
    header: v.optional(IdHeaderName, 'x-request-id'),
    trustIncoming: v.optional(v.picklist(['never', 'trusted-proxies', 'always']), 'never'),
  }),
  {},
);

/** worker.json `tracing`: OpenTelemetry spans exported over OTLP/HTTP. Off unless set. */
export const TracingSchema = v.optional(
  v.strictObject({
    /** The collector's OTLP/HTTP traces URL, such as http://127.0.0.1:4318/v1/traces. */
    endpoint: v.pipe(v.string(), v.url(), v.check((s) => /^https?:\/\//.test(s), 'must be an http:// or https:// URL')),
    /** The share of new traces recorded, 0..1 (an incoming sampled flag is followed). */
    sampleRatio: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 1),
    /** Headers sent with every export, each value read from an environment variable (collector tokens stay out of the file). */
    headersEnv: v.optional(v.record(HeaderName, EnvName), {}),
    serviceName: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128)), 'switchyard'),
  }),
);

/** What workers get of these settings: defaults filled, the access log's path absolute. */
export function observeSettings(config: GatewayConfig, baseDir: string): ObserveSettings {
  const access = config.log.access;
  const t = config.tracing;
  return {
    metrics: config.metrics.enabled,
    requestId: config.requestId.enabled ? { header: config.requestId.header.toLowerCase(), trustIncoming: config.requestId.trustIncoming } : null,
    accessLog: access.enabled
      ? {
          format: access.format,
          sample: access.sample,
          fields: access.fields ?? null,
          ...(access.path === undefined ? {} : { path: resolve(baseDir, access.path) }),
          redactQuery: access.redactQuery.map((n) => n.toLowerCase()),
        }
      : null,
    tracing: t === undefined ? null : { endpoint: t.endpoint, sampleRatio: t.sampleRatio, headersEnv: t.headersEnv, serviceName: t.serviceName },
  };
}
