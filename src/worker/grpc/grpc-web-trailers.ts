/** The flag byte of a gRPC-Web trailer frame: its most significant bit set, uncompressed. */
export const TRAILER_FLAG = 0x80;

/**
 * A gRPC-Web trailer frame (PROTOCOL-WEB.md, "Message framing"): the trailers
 * (`name, value, …` pairs, strings or undici's Buffers) as HTTP/1 header lines
 * `name:value\r\n` with lower-case names, after the flag byte 0x80 and the block's
 * 4-byte big-endian length. gRPC-Web clients read the status from it.
 */
export function trailerFrame(trailers: readonly (string | Buffer)[]): Buffer {
  let block = '';
  for (let i = 0; i + 1 < trailers.length; i += 2) {
    block += `${text(trailers[i]!).toLowerCase()}:${text(trailers[i + 1]!)}\r\n`;
  }
  const body = Buffer.from(block, 'latin1');
  const frame = Buffer.allocUnsafe(5 + body.length);
  frame[0] = TRAILER_FLAG;
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  return frame;
}

const text = (v: string | Buffer): string => (typeof v === 'string' ? v : v.toString('latin1'));
