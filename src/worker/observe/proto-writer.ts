/**
 * Protocol Buffers' wire format, written forward into one Buffer: what OTLP/HTTP's binary
 * encoding needs and nothing more (varints, fixed64, length-delimited fields). A message
 * whose length is known only once written gets a 4-byte hole, closed by `close`.
 */

/** A field's key byte: field number and wire type (0 varint, 1 fixed64, 2 length-delimited). */
export function tag(field: number, wire: 0 | 1 | 2): number {
  return (field << 3) | wire;
}

/** Bytes a varint of `n` (0 ≤ n < 2^53) takes (comparisons: a division per byte cost more). */
export function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x20_0000) return 3;
  if (n < 0x1000_0000) return 4;
  let size = 5;
  for (n = Math.floor(n / 0x8_0000_0000); n > 0; n = Math.floor(n / 128)) size++;
  return size;
}

/** A length-delimited field holding `content`, encoded once (a key, a resource, a scope): copied, never encoded again. */
export function lengthDelimited(field: number, content: Uint8Array): Buffer {
  const w = new ProtoWriter(Buffer.allocUnsafe(1 + varintSize(content.length) + content.length));
  w.byte(tag(field, 2));
  w.varint(content.length);
  w.bytes(content);
  return w.buf;
}

/** A string field whose value is fixed, encoded once. */
export function stringField(field: number, value: string): Buffer {
  return lengthDelimited(field, Buffer.from(value, 'utf8'));
}

/** A nested message's length is written in this many bytes at most: up to 256 MiB. */
const MAX_HOLE = 4;

/** Whether every UTF-16 unit of `s` is ASCII: its UTF-8 bytes are its char codes. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/** The UTF-8 length of `s`; a short ASCII one is checked in JavaScript, without a call into Buffer's native code. */
export function utf8Length(s: string): number {
  return s.length < 128 && isAscii(s) ? s.length : Buffer.byteLength(s, 'utf8');
}

/** A value encoded once into a Buffer of its own (an attribute kept for every span): `write` takes at most `maxBytes`. */
export function encodedOnce(maxBytes: number, write: (w: ProtoWriter) => void): Buffer {
  const w = new ProtoWriter(Buffer.allocUnsafe(maxBytes));
  write(w);
  return Buffer.from(w.buf.subarray(0, w.pos));
}

/** A hex digit's value by char code (lower-case digits only reach here). */
const HEX = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;

export class ProtoWriter {
  pos = 0;

  constructor(public buf: Buffer) {}

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    const buf = this.buf;
    let pos = this.pos;
    // Below 2^31 the bit operations are exact; above, divisions.
    while (n >= 0x8000_0000) {
      buf[pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    while (n >= 128) {
      buf[pos++] = (n & 127) | 128;
      n >>>= 7;
    }
    buf[pos++] = n;
    this.pos = pos;
  }

  /** Bytes encoded once (a key, a resource): a short run by hand, as a call into TypedArray's set costs more. */
  bytes(b: Uint8Array): void {
    if (b.length > 48) {
      this.buf.set(b, this.pos);
      this.pos += b.length;
    } else this.copy(b, 0, b.length);
  }

  /** `n` bytes of `from` at `at`, one by one. */
  private copy(from: Uint8Array, at: number, n: number): void {
    const buf = this.buf;
    const pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos + i] = from[at + i]!;
    this.pos = pos + n;
  }

  /** A bytes field from lower-case hex (trace and span ids a client sent, checked by the gateway). */
  hex(field: number, hex: string): void {
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = tag(field, 2);
    buf[pos++] = hex.length >> 1;
    for (let i = 0; i < hex.length; i += 2) buf[pos++] = (HEX[hex.charCodeAt(i)]! << 4) | HEX[hex.charCodeAt(i + 1)]!;
    this.pos = pos;
  }

  /** A bytes field of `n` bytes at `at` in `from` (an id the gateway made, where its random bytes are). */
  slice(field: number, from: Uint8Array, at: number, n: number): void {
    this.buf[this.pos++] = tag(field, 2);
    this.buf[this.pos++] = n;
    this.copy(from, at, n);
  }

  /**
   * The bytes of ASCII the gateway made or checked (a method, an entity name, an address):
   * no UTF-8 to encode; a short one by hand, as a call into Buffer's native writer costs more.
   */
  asciiBytes(s: string): void {
    const n = s.length;
    if (n > 64) {
      this.pos += this.buf.write(s, this.pos, 'latin1');
      return;
    }
    const buf = this.buf;
    const pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos + i] = s.charCodeAt(i);
    this.pos = pos + n;
  }

  /** A string field of any text (a path, a trace state, an error). */
  text(field: number, s: string): void {
    this.buf[this.pos++] = tag(field, 2);
    const bytes = utf8Length(s);
    this.varint(bytes);
    this.string(s, bytes);
  }

  /** The UTF-8 bytes of `s`, `bytes` long (utf8Length's): equal to its length only when it is ASCII, then written by hand. */
  string(s: string, bytes: number): void {
    if (bytes === s.length) this.asciiBytes(s);
    else this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A fixed64 field of nanoseconds since the epoch, from epoch milliseconds, exact to what a double holds. */
  nanos(field: number, ms: number): void {
    const whole = Math.floor(ms);
    const sub = Math.round((ms - whole) * 1e6);
    // whole · 10^6 + sub in two 32-bit halves: every product stays below 2^53.
    const high = Math.floor(whole / 0x1_0000_0000);
    const low = (whole - high * 0x1_0000_0000) * 1e6 + sub;
    const carry = Math.floor(low / 0x1_0000_0000);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = tag(field, 1);
    pos = le32(buf, pos, low - carry * 0x1_0000_0000);
    this.pos = le32(buf, pos, high * 1e6 + carry);
  }

  /**
   * Opens a nested message of field `field` whose content takes `maxLength` bytes at most:
   * returns where its content starts, for `close`. The hole for its length is sized for
   * that bound, so `close` moves the content only when it came out shorter than that.
   */
  open(field: number, maxLength = 0x0fff_ffff): number {
    this.buf[this.pos++] = tag(field, 2);
    this.pos += Math.min(varintSize(maxLength), MAX_HOLE);
    return this.pos;
  }

  /** Closes the message opened at `start` with the same `maxLength`: writes its length, moving its content back over what the length left unused. */
  close(start: number, maxLength = 0x0fff_ffff): void {
    const length = this.pos - start;
    const size = varintSize(length);
    const hole = Math.min(varintSize(maxLength), MAX_HOLE);
    const at = start - hole;
    if (size < hole) this.buf.copyWithin(at + size, start, this.pos);
    this.pos = at;
    this.varint(length);
    this.pos += length;
  }
}

/** A little-endian 32-bit unsigned integer at `pos`; returns the position after it. */
function le32(buf: Buffer, pos: number, v: number): number {
  buf[pos] = v & 0xff;
  buf[pos + 1] = (v >>> 8) & 0xff;
  buf[pos + 2] = (v >>> 16) & 0xff;
  buf[pos + 3] = v >>> 24;
  return pos + 4;
}
