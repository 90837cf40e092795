import { ERRORS, type ErrorCode } from '../../shared/errors.js';

/**
 * The gateway's own refusals of a gRPC call, as gRPC status codes: the HTTP status the
 * envelope would have had, mapped as gRPC's HTTP-to-gRPC table does
 * (doc/http-grpc-status-mapping.md), except where a gateway means more: 429 is
 * RESOURCE_EXHAUSTED (a quota), 504 DEADLINE_EXCEEDED, 413 RESOURCE_EXHAUSTED.
 */
const BY_HTTP_STATUS: Readonly<Record<number, number>> = {
  400: 13, // INTERNAL: the gRPC mapping's, a request no gRPC client makes on purpose
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 12, // UNIMPLEMENTED
  405: 12,
  408: 4, // DEADLINE_EXCEEDED
  411: 13,
  413: 8, // RESOURCE_EXHAUSTED
  415: 13,
  429: 8,
  431: 8,
  500: 13,
  502: 14, // UNAVAILABLE
  503: 14,
  504: 4,
};

/** UNKNOWN, for any other status. */
const UNKNOWN = 2;

export function grpcStatusOf(httpStatus: number): number {
  return BY_HTTP_STATUS[httpStatus] ?? UNKNOWN;
}

/**
 * `grpc-message`: the envelope's code, message and trace id, percent-encoded as the gRPC
 * wire wants (bytes outside printable ASCII, and `%` itself).
 */
export function grpcMessage(code: ErrorCode | null, traceId: string, message?: string): string {
  const text = code === null ? (message ?? '') : `${code}: ${message ?? ERRORS[code].message}`;
  return percentEncode(traceId === '' ? text : `${text} (traceId ${traceId})`);
}

function percentEncode(s: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(s)) return s;
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** The longest delay setTimeout takes (2^31 - 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

const UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };

/**
 * `grpc-timeout` in milliseconds (PROTOCOL-HTTP2.md: at most 8 digits and a unit), or
 * null when absent or malformed: a malformed one is ignored, as grpc-go does.
 */
export function grpcTimeoutMs(value: string | undefined): number | null {
  if (value === undefined || value.length < 2 || value.length > 9) return null;
  const unit = UNIT_MS[value[value.length - 1]!];
  const digits = value.slice(0, -1);
  if (unit === undefined || !/^\d+$/.test(digits)) return null;
  const ms = Math.max(0, Math.ceil(Number(digits) * unit));
  // Past a timer's range (about 24.8 days) setTimeout would fire at once: no deadline, as none fits.
  return ms > MAX_TIMER_MS ? null : ms;
}

const STATUS_FIELDS = new Set(['grpc-status', 'grpc-message', 'grpc-status-details-bin']);

/** A gRPC answer's status fields in its head (a trailers-only answer), or null. */
export function grpcStatusFields(headers: readonly (readonly [string, string])[]): [string, string][] | null {
  let out: [string, string][] | null = null;
  for (const h of headers) if (STATUS_FIELDS.has(h[0])) (out ??= []).push([h[0], h[1]]);
  return out;
}
