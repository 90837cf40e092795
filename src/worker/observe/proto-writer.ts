/**
 * Protocol Buffers' wire format, written forward into one Buffer: what OTLP/HTTP's binary
 * encoding needs and nothing more (varints, fixed64, length-delimited fields). A message
 * whose length is known only once written gets a 4-byte hole, closed by `close`.
 */

/** A field's key byte: field number and wire type (0 varint, 1 fixed64, 2 length-delimited). */
export function tag(field: number, wire: 0 | 1 | 2): number {
  return (field << 3) | wire;
}

/** Bytes a varint of `n` (0 ≤ n < 2^53) takes. */
export function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
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
const HOLE = 4;

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
    while (n >= 128) {
      buf[this.pos++] = (n & 127) | 128;
      n = Math.floor(n / 128);
    }
    buf[this.pos++] = n;
  }

  bytes(b: Uint8Array): void {
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A bytes field from lower-case hex (trace and span ids, checked or made by the gateway). */
  hex(field: number, hex: string): void {
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = tag(field, 2);
    buf[pos++] = hex.length >> 1;
    for (let i = 0; i < hex.length; i += 2) buf[pos++] = (HEX[hex.charCodeAt(i)]! << 4) | HEX[hex.charCodeAt(i + 1)]!;
    this.pos = pos;
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
    this.varint(Buffer.byteLength(s, 'utf8'));
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A fixed64 field of nanoseconds since the epoch, from epoch milliseconds, exact to what a double holds. */
  nanos(field: number, ms: number): void {
    const whole = Math.floor(ms);
    const sub = Math.round((ms - whole) * 1e6);
    // whole · 10^6 + sub in two 32-bit halves: every product stays below 2^53.
    const high = Math.floor(whole / 0x1_0000_0000);
    const low = (whole - high * 0x1_0000_0000) * 1e6 + sub;
    const carry = Math.floor(low / 0x1_0000_0000);
    this.buf[this.pos++] = tag(field, 1);
    this.buf.writeUInt32LE(low - carry * 0x1_0000_0000, this.pos);
    this.buf.writeUInt32LE(high * 1e6 + carry, this.pos + 4);
    this.pos += 8;
  }

  /** Opens a nested message of field `field`: returns where its content starts, for `close`. */
  open(field: number): number {
    this.buf[this.pos++] = tag(field, 2);
    this.pos += HOLE;
    return this.pos;
  }

  /** Closes the message opened at `start`: writes its length and moves its content back over the unused hole. */
  close(start: number): void {
    const length = this.pos - start;
    const size = varintSize(length);
    const at = start - HOLE;
    if (size < HOLE) this.buf.copyWithin(at + size, start, this.pos);
    this.pos = at;
    this.varint(length);
    this.pos += length;
  }
}
