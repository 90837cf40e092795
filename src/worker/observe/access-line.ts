import type { ObserveSettings } from '../../contracts/ipc.js';
import { ACCESS_LOG_FIELDS, type AccessLogField } from '../../shared/gateway-config-observability.js';
import { redactQuery } from '../../shared/redact-query.js';
import { credentialNames } from '../../shared/query-credential.js';
import { MAX_BYTES_PER_CHAR, type LineBuffer } from './line-buffer.js';
import type { RequestRecord } from './request-record.js';

/** worker.json `log.access` as a worker gets it (enabled). */
export type AccessLogSettings = NonNullable<ObserveSettings['accessLog']>;

/** Writes one finished request as one access log line, `\n` included, into `out`. */
export type AccessLineFormat = (r: RequestRecord, out: LineBuffer) => void;

/**
 * The line format of `settings`: a JSON object (the configured fields, in ACCESS_LOG_FIELDS
 * order) or an Apache/nginx "combined" line. Either way one request is exactly one line,
 * whatever a client put in its path or headers.
 */
export function accessLineFormat(settings: AccessLogSettings): AccessLineFormat {
  // The names as key-auth reads a query credential: `api.key`, `api_key[]`, `+api_key` are `api_key`.
  const secret = settings.redactQuery.length === 0 ? null : credentialNames(settings.redactQuery);
  const target = (r: RequestRecord) => (r.query === null ? r.path : `${r.path}?${secret === null || r.query === '' ? r.query : redactQuery(r.query, secret, r.queryPairs)}`);
  return settings.format === 'combined' ? combinedLine(target) : jsonLine(settings.fields ?? ACCESS_LOG_FIELDS, target);
}

type Target = (r: RequestRecord) => string;

/**
 * `time`: the ISO time of the request's arrival, quoted. toISOString runs once per second
 * (it is slow: V8 asks the OS for the local offset); the milliseconds are written as digits.
 */
export function isoTime(): (epochMs: number, out: LineBuffer) => void {
  let second = -1;
  let prefix = Buffer.alloc(0);
  return (epochMs, out) => {
    const whole = Math.floor(epochMs);
    const s = Math.floor(whole / 1000);
    if (s !== second) {
      second = s;
      prefix = Buffer.from(`"${new Date(s * 1000).toISOString().slice(0, 20)}`); // "2026-11-27T15:52:05.
    }
    out.bytes(prefix);
    out.digits(whole - s * 1000, 3);
    out.byte(0x5a); // Z
    out.byte(0x22);
  };
}

/** A line's bytes apart from its strings: keys, time, numbers and punctuation of every field. */
const FIXED_BOUND = 512;
const len = (s: string | null | undefined) => (s === null || s === undefined ? 0 : s.length);

/**
 * One function for every field set (a loop over per-field closures was a polymorphic call
 * per field): the fields in ACCESS_LOG_FIELDS order, each written when chosen.
 */
function jsonLine(fields: readonly AccessLogField[], target: Target): AccessLineFormat {
  const time = isoTime();
  const chosen = ACCESS_LOG_FIELDS.filter((f) => fields.includes(f));
  // A chosen field's key, its separator included; a field left out has none.
  const key: Partial<Record<AccessLogField, Buffer>> = Object.fromEntries(chosen.map((f, i) => [f, Buffer.from(`${i === 0 ? '{' : ','}"${f}":`)]));
  return (r, out) => {
    // Each value read once: some are lookups (headers) or slices (the trace id).
    const requestId = r.requestId;
    const tenant = r.tenant;
    const route = r.route;
    const method = r.method;
    const path = key.path ? target(r) : '';
    const upstream = r.upstream;
    const client = r.client;
    const userAgent = key.userAgent ? r.userAgent : undefined;
    const referer = key.referer ? r.referer : undefined;
    const traceId = key.traceId ? r.traceId : null;
    const strings = len(requestId) + len(tenant) + len(route) + len(method) + len(path) + len(upstream) + len(client) + len(userAgent) + len(referer) + len(traceId);
    out.reserve(FIXED_BOUND + MAX_BYTES_PER_CHAR * strings);
    if (key.time) {
      out.bytes(key.time);
      time(r.startedAt, out);
    }
    out.quotedField(key.requestId, requestId);
    out.quotedField(key.tenant, tenant);
    out.quotedField(key.route, route);
    out.jsonField(key.method, method);
    out.jsonField(key.path, path);
    out.numberField(key.status, r.status);
    out.numberField(key.grpcStatus, r.grpcStatus);
    out.numberField(key.bytesReceived, r.bytesReceived);
    out.numberField(key.bytesSent, r.bytesSent);
    out.msField(key.durationMs, r.durationMs);
    out.quotedField(key.upstream, upstream);
    out.msField(key.upstreamMs, r.upstreamMs);
    out.quotedField(key.client, client);
    out.jsonField(key.userAgent, userAgent);
    out.jsonField(key.referer, referer);
    out.quotedField(key.traceId, traceId);
    out.byte(0x7d); // }
    out.byte(0x0a);
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `27/Nov/2026:15:52:05 +0000` (UTC), as nginx's $time_local on a UTC host. */
export function combinedTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

// Printable ASCII but `"` and `\`: written as is; anything else is escaped.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const HEX = '0123456789ABCDEF';

/**
 * As nginx escapes a variable in a log line: `"`, `\`, control characters and every byte
 * of a non-ASCII character as `\xHH` (UTF-8), so no value can close a quoted field or
 * start a line.
 */
export function escapeLogValue(s: string): string {
  if (PLAIN.test(s)) return s;
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\x${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

/** An unquoted field: `-` when absent, and a space escaped too (it would split the field). */
const bare = (s: string | null | undefined) => (s === null || s === undefined || s === '' ? '-' : escapeLogValue(s).replace(/ /g, '\\x20'));
/** A number field: `-` when there is none to write. */
const count = (n: number) => (Number.isFinite(n) ? String(n) : '-');
/** A quoted field's content: `-` when absent, as nginx writes `"-"`. */
const quoted = (s: string | undefined) => (s === undefined || s === '' ? '-' : escapeLogValue(s));

/** `client - - [time] "METHOD target HTTP/1.1" status bytes "referer" "user-agent"`. */
function combinedLine(target: Target): AccessLineFormat {
  // One Date per second of arrival, not one per line.
  let second = -1;
  let time = '';
  return (r, out) => {
    const s = Math.floor(r.startedAt / 1000);
    if (s !== second) {
      second = s;
      time = combinedTime(r.startedAt);
    }
    const t = target(r);
    const request = `${escapeLogValue(r.method)} ${t === '' ? '-' : escapeLogValue(t)} HTTP/1.1`;
    const line = `${bare(r.client)} - - [${time}] "${request}" ${count(r.status)} ${count(r.bytesSent)} "${quoted(r.referer)}" "${quoted(r.userAgent)}"\n`;
    out.reserve(3 * line.length); // escaped to ASCII but for the client address: at most 3 bytes a character
    out.utf8(line);
  };
}
