// Valid in a JSON string, but line breaks to some readers (Python's splitlines, for one).
const UNICODE_BREAK = /[\u0085\u2028\u2029]/;
const UNICODE_BREAKS = /[\u0085\u2028\u2029]/g;
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A JSON string for text that is not plain printable ASCII: JSON.stringify, and no Unicode line break left raw. */
export function jsonText(s: string): string {
  const json = JSON.stringify(s);
  return UNICODE_BREAK.test(json) ? json.replace(UNICODE_BREAKS, unicodeEscape) : json;
}

const NULL = Buffer.from('null');
/** The most bytes one UTF-16 unit becomes in a line: `\u0085` in JSON (6), more than UTF-8's 3. */
export const MAX_BYTES_PER_CHAR = 6;

/**
 * Access log lines written as bytes, in place, into the buffer of the next write. Built as
 * strings, each line was a tree of concatenations that was flattened, joined with the
 * others, converted to bytes, and copied by the collector while it waited: about 15 µs of
 * a proxied request's CPU in a running worker, against a few µs for these bytes.
 *
 * A writer reserves a bound on its line's bytes first; the buffer is handed to `full` (and a
 * new one started) when the line might not fit. A handed buffer is never written again.
 */
export class LineBuffer {
  private buf: Buffer;
  private at = 0;

  constructor(
    private readonly size: number,
    private readonly full: (bytes: Buffer) => void,
  ) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  /**
   * Room for `bound` more bytes: what is gathered goes first when they might not fit in `size`;
   * a longer line gets a buffer of its own, handed before the next line (a write stays at most
   * `size` bytes but for such a line).
   */
  reserve(bound: number): void {
    if (this.at + bound <= this.size) return;
    this.hand();
    if (bound > this.buf.length) this.buf = Buffer.allocUnsafeSlow(bound);
  }

  /** Hands what is gathered to `full` (nothing when empty) and starts a new buffer. */
  hand(): void {
    const bytes = this.take();
    if (bytes !== null) this.full(bytes);
  }

  /** What is gathered (null when empty), for its owner to write itself; a new buffer starts. */
  take(): Buffer | null {
    if (this.at === 0) return null;
    const bytes = this.buf.subarray(0, this.at);
    this.buf = Buffer.allocUnsafeSlow(this.size);
    this.at = 0;
    return bytes;
  }

  byte(c: number): void {
    this.buf[this.at++] = c;
  }

  /** Bytes encoded once (a key, a second's time prefix): a loop, cheaper than a native copy for a few bytes. */
  bytes(b: Uint8Array): void {
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < b.length; i++) buf[at++] = b[i]!;
    this.at = at;
  }

  private null(): void {
    this.bytes(NULL);
  }

  /** Text as UTF-8. */
  utf8(s: string): void {
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  /** A value the gateway made or checked, quoted as it is (null when absent); UTF-8 past its first non-ASCII character. */
  quoted(s: string | null | undefined): void {
    if (s === null || s === undefined || s === '') return this.null();
    const buf = this.buf;
    let at = this.at;
    buf[at++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.at = at;
        this.utf8(s.slice(i));
        buf[this.at++] = 0x22;
        return;
      }
      buf[at++] = c;
    }
    buf[at++] = 0x22;
    this.at = at;
  }

  /** Any text as a JSON string (null when absent): printable ASCII as it is, anything else through jsonText. */
  json(s: string | null | undefined): void {
    if (s === null || s === undefined || s === '') return this.null();
    const buf = this.buf;
    const start = this.at;
    let at = start;
    buf[at++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        this.at = start;
        this.utf8(jsonText(s));
        return;
      }
      buf[at++] = c;
    }
    buf[at++] = 0x22;
    this.at = at;
  }

  /** A JSON number, null for NaN and the infinities (not JSON); digits for an integer up to 2^30 (exact in a double's division). */
  number(n: number | null): void {
    if (n === null || !Number.isFinite(n)) return this.null();
    if (n < 0 || n > 0x3fffffff || !Number.isInteger(n)) return this.utf8(String(n));
    this.digits(n, 1);
  }

  /** Milliseconds rounded to the microsecond, as String(Math.round(n * 1000) / 1000) writes them, from integers. */
  ms(n: number | null): void {
    if (n === null || !Number.isFinite(n)) return this.null();
    const us = Math.round(n * 1000);
    if (us < 0 || us > 0x3fffffff) return this.number(us / 1000);
    const whole = Math.floor(us / 1000);
    this.digits(whole, 1);
    let frac = us - whole * 1000;
    if (frac === 0) return;
    this.buf[this.at++] = 0x2e;
    // Up to three digits, without trailing zeros.
    for (let d = 100; frac > 0; d /= 10) {
      const q = Math.floor(frac / d);
      this.buf[this.at++] = 0x30 + q;
      frac -= q * d;
    }
  }

  // A JSON line's fields: the key (its separator included) and the value; nothing for a field left out (no key).
  quotedField(key: Buffer | undefined, s: string | null | undefined): void {
    if (key === undefined) return;
    this.bytes(key);
    this.quoted(s);
  }

  jsonField(key: Buffer | undefined, s: string | null | undefined): void {
    if (key === undefined) return;
    this.bytes(key);
    this.json(s);
  }

  numberField(key: Buffer | undefined, n: number | null): void {
    if (key === undefined) return;
    this.bytes(key);
    this.number(n);
  }

  msField(key: Buffer | undefined, n: number | null): void {
    if (key === undefined) return;
    this.bytes(key);
    this.ms(n);
  }

  /** A non-negative integer's decimal digits, at least `width` of them (zero-padded). */
  digits(n: number, width: number): void {
    let d = 1;
    for (let w = 1; w < width || d * 10 <= n; w++) d *= 10;
    const buf = this.buf;
    let at = this.at;
    for (; d >= 1; d /= 10) {
      const q = Math.floor(n / d);
      buf[at++] = 0x30 + q;
      n -= q * d;
    }
    this.at = at;
  }
}
