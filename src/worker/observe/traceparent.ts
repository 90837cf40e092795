import { randomFillSync } from 'node:crypto';

/** A W3C trace context's parent (`traceparent`): ids in lower-case hex. */
export interface TraceParent {
  /** 32 hex digits, not all zero. */
  readonly traceId: string;
  /** 16 hex digits, not all zero: the caller's span. */
  readonly spanId: string;
  /** The sampled flag (bit 0 of trace-flags). */
  readonly sampled: boolean;
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** One lower-case hex digit, by char code. */
function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
}

function allHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isHex(s.charCodeAt(i))) return false;
  return true;
}

/**
 * Whether a `traceparent` header (W3C Trace Context) is one to continue: not when its
 * lengths or dashes are wrong, a digit is upper-case or not hex, the version is ff or an
 * id is all zeros. A later version is read by the 00 layout, as the spec asks, when what
 * follows the flags starts with a dash. Allocates nothing.
 */
export function validTraceparent(value: string): boolean {
  const n = value.length;
  if (n < 55) return false;
  if (value.charCodeAt(2) !== 45 || value.charCodeAt(35) !== 45 || value.charCodeAt(52) !== 45) return false;
  if (!allHex(value, 0, 2) || !allHex(value, 3, 35) || !allHex(value, 36, 52) || !allHex(value, 53, 55)) return false;
  const v0 = value.charCodeAt(0);
  const v1 = value.charCodeAt(1);
  if (v0 === 102 && v1 === 102) return false; // ff
  if (v0 === 48 && v1 === 48 ? n !== 55 : n > 55 && value.charCodeAt(55) !== 45) return false;
  return !allZero(value, 3, 35) && !allZero(value, 36, 52);
}

function allZero(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (s.charCodeAt(i) !== 48) return false;
  return true;
}

/** A class, not an object literal: V8 may move a literal's allocation site to its old generation (otlp-span.ts). */
class ParsedTraceparent implements TraceParent {
  constructor(
    readonly traceId: string,
    readonly spanId: string,
    readonly sampled: boolean,
  ) {}
}

/** A `traceparent` header's ids and sampled flag; null when it is not valid (validTraceparent). */
export function parseTraceparent(value: string | undefined): TraceParent | null {
  if (value === undefined || !validTraceparent(value)) return null;
  return new ParsedTraceparent(value.slice(3, 35), value.slice(36, 52), (parseInt(value.slice(53, 55), 16) & 1) === 1);
}

/** A version 00 `traceparent`. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** Where a made id's bytes are: in the pool it was cut from (a pool is never written again once used up). */
export interface IdBytes {
  bytes: Buffer | null;
  at: number;
}

/**
 * Random trace and span ids, cut from a pool of random bytes and its hex that
 * crypto.randomFillSync refills once used up: one system call and one hex conversion per
 * few hundred ids. A used-up pool is left to the spans that still point into it
 * (`lastTrace`, `lastSpan`), so they copy their ids' bytes rather than decode hex.
 */
export class TraceIds {
  private pool: Buffer = Buffer.alloc(0);
  private hexPool = '';
  private at = 0;
  /** The bytes of the trace id and of the span id last made. */
  readonly lastTrace: IdBytes = { bytes: null, at: 0 };
  readonly lastSpan: IdBytes = { bytes: null, at: 0 };

  constructor(private readonly poolBytes = 4096) {}

  /** `digits` random hex digits; `into`: where their bytes are. */
  private hex(digits: number, into: IdBytes): string {
    if (this.at + digits > this.hexPool.length) {
      this.pool = randomFillSync(Buffer.allocUnsafeSlow(this.poolBytes));
      this.hexPool = this.pool.toString('hex');
      this.at = 0;
    }
    const s = this.hexPool.slice(this.at, this.at + digits);
    into.bytes = this.pool;
    into.at = this.at >> 1;
    this.at += digits;
    return s;
  }

  traceId(): string {
    const id = this.hex(32, this.lastTrace);
    return id === ZERO_TRACE ? this.traceId() : id;
  }

  spanId(): string {
    const id = this.hex(16, this.lastSpan);
    return id === ZERO_SPAN ? this.spanId() : id;
  }

  /** A new trace's `traceparent`, not sampled. */
  newTraceparent(): string {
    return `00-${this.traceId()}-${this.spanId()}-00`;
  }
}
