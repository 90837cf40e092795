/**
 * Follows gRPC's length-prefixed framing (a flag byte, a 4-byte big-endian length, the
 * message) across chunks, without holding any bytes: it only says where frames end.
 */
export class GrpcFrameBoundaries {
  /** Bytes of the current frame's 5-byte prefix read so far. */
  private prefixRead = 0;
  private length = 0;
  /** Message bytes of the current frame still to come (once its prefix is read). */
  private left = 0;

  /** The offset in `chunk` just after the last frame that ends in it; -1 when none does. */
  lastEnd(chunk: Uint8Array): number {
    let last = -1;
    let i = 0;
    while (i < chunk.length) {
      if (this.prefixRead < 5) {
        const byte = chunk[i++]!;
        // byte 0 is the flag; 1..4 the length (a multiplication: a bit shift would turn negative past 2^31)
        if (this.prefixRead > 0) this.length = this.length * 256 + byte;
        if (++this.prefixRead < 5) continue;
        this.left = this.length;
      } else {
        const take = Math.min(this.left, chunk.length - i);
        i += take;
        this.left -= take;
      }
      if (this.left === 0) {
        last = i;
        this.prefixRead = 0;
        this.length = 0;
      }
    }
    return last;
  }
}
