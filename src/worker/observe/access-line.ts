import type { ObserveSettings } from '../../contracts/ipc.js';
import { ACCESS_LOG_FIELDS, type AccessLogField } from '../../shared/gateway-config-observability.js';
import { redactQuery } from '../../shared/redact-query.js';
import type { RequestRecord } from './request-record.js';

/** worker.json `log.access` as a worker gets it (enabled). */
export type AccessLogSettings = NonNullable<ObserveSettings['accessLog']>;

/** Formats one finished request as one access log line, `\n` included. */
export type AccessLineFormat = (r: RequestRecord) => string;

/**
 * The line format of `settings`: a JSON object (the configured fields, in ACCESS_LOG_FIELDS
 * order) or an Apache/nginx "combined" line. Either way one request is exactly one line,
 * whatever a client put in its path or headers.
 */
export function accessLineFormat(settings: AccessLogSettings): AccessLineFormat {
  const names = new Set(settings.redactQuery.map((n) => n.toLowerCase()));
  const secret = (name: string) => names.has(name.toLowerCase());
  const target = (r: RequestRecord) => (r.query === null ? r.path : `${r.path}?${names.size === 0 || r.query === '' ? r.query : redactQuery(r.query, secret)}`);
  return settings.format === 'combined' ? combinedLine(target) : jsonLine(settings.fields ?? ACCESS_LOG_FIELDS, target);
}

type Target = (r: RequestRecord) => string;

// Valid in a JSON string, but line breaks to some readers (Python's splitlines, for one).
const UNICODE_BREAK = /[\u0085\u2028\u2029]/;
const UNICODE_BREAKS = /[\u0085\u2028\u2029]/g;
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
// Printable ASCII but `"` and `\`: what JSON.stringify would only wrap in quotes.
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string for any input: values clients choose go through JSON.stringify unless plain. */
function str(s: string | null | undefined): string {
  if (s === null || s === undefined || s === '') return 'null';
  if (JSON_PLAIN.test(s)) return `"${s}"`;
  const json = JSON.stringify(s);
  return UNICODE_BREAK.test(json) ? json.replace(UNICODE_BREAKS, unicodeEscape) : json;
}
/**
 * A value the gateway made or checked (an id it generated or found well formed, an entity
 * name, a method token, a configured target, an IP address, hex): nothing in it needs
 * escaping, so it is quoted as it is.
 */
const checked = (s: string | null | undefined): string => (s === null || s === undefined || s === '' ? 'null' : `"${s}"`);

/** '000' to '999': a time's milliseconds. */
const MILLIS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** '' and '.001' to '.999' without trailing zeros: a duration's fraction of a millisecond. */
const FRACTIONS = MILLIS.map((m, i) => (i === 0 ? '' : `.${m.replace(/0+$/, '')}`));

/**
 * `time`: the ISO string of the request's arrival. toISOString runs once per second (it is
 * slow: V8 asks the OS for the local offset); the milliseconds come from a table.
 */
export function isoTime(): (epochMs: number) => string {
  let second = -1;
  let prefix = '';
  return (epochMs) => {
    const whole = Math.floor(epochMs);
    const s = Math.floor(whole / 1000);
    if (s !== second) {
      second = s;
      prefix = `"${new Date(s * 1000).toISOString().slice(0, 20)}`; // "2026-11-27T15:52:05.
    }
    return `${prefix}${MILLIS[whole - s * 1000]}Z"`;
  };
}

/** A JSON number; NaN and the infinities are not JSON, so they are written as null. */
const num = (n: number | null): string => (n === null || !Number.isFinite(n) ? 'null' : String(n));
/**
 * Milliseconds rounded to the microsecond, as String(Math.round(n * 1000) / 1000) writes them,
 * from integers: formatting a double costs more than the rest of the line.
 */
export function ms(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return 'null';
  const us = Math.round(n * 1000);
  if (us < 0 || us > 0x3fffffff) return num(us / 1000);
  const whole = Math.floor(us / 1000);
  return `${whole}${FRACTIONS[us - whole * 1000]}`;
}

/**
 * One function for every field set (a loop over per-field closures was a polymorphic call
 * per field): the fields in ACCESS_LOG_FIELDS order, each written when chosen.
 */
function jsonLine(fields: readonly AccessLogField[], target: Target): AccessLineFormat {
  const time = isoTime();
  const chosen = ACCESS_LOG_FIELDS.filter((f) => fields.includes(f));
  // A chosen field's key, its separator included; a field left out has none.
  const key: Partial<Record<AccessLogField, string>> = Object.fromEntries(chosen.map((f, i) => [f, `${i === 0 ? '{' : ','}"${f}":`]));
  return (r) => {
    let line = '';
    if (key.time) line += key.time + time(r.startedAt);
    if (key.requestId) line += key.requestId + checked(r.requestId);
    if (key.tenant) line += key.tenant + checked(r.tenant);
    if (key.route) line += key.route + checked(r.route);
    if (key.method) line += key.method + str(r.method);
    if (key.path) line += key.path + str(target(r));
    if (key.status) line += key.status + num(r.status);
    if (key.bytesReceived) line += key.bytesReceived + num(r.bytesReceived);
    if (key.bytesSent) line += key.bytesSent + num(r.bytesSent);
    if (key.durationMs) line += key.durationMs + ms(r.durationMs);
    if (key.upstream) line += key.upstream + checked(r.upstream);
    if (key.upstreamMs) line += key.upstreamMs + ms(r.upstreamMs);
    if (key.client) line += key.client + checked(r.client);
    if (key.userAgent) line += key.userAgent + str(r.userAgent);
    if (key.referer) line += key.referer + str(r.referer);
    if (key.traceId) line += key.traceId + checked(r.traceId);
    return `${line}}\n`;
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
  return (r) => {
    const s = Math.floor(r.startedAt / 1000);
    if (s !== second) {
      second = s;
      time = combinedTime(r.startedAt);
    }
    const t = target(r);
    const request = `${escapeLogValue(r.method)} ${t === '' ? '-' : escapeLogValue(t)} HTTP/1.1`;
    return `${bare(r.client)} - - [${time}] "${request}" ${count(r.status)} ${count(r.bytesSent)} "${quoted(r.referer)}" "${quoted(r.userAgent)}"\n`;
  };
}
