import { GrpcFrameBoundaries } from './grpc-frame-boundaries.js';

/**
 * Base64 for a gRPC-Web text answer, chunk by chunk. Inside a frame the bytes that do not
 * fill a group of three (at most 2) wait for the next chunk, so no padding splits a
 * message; at the end of each frame everything is encoded, padding included, so a
 * message never waits for the next one to reach the client (PROTOCOL-WEB.md: messages
 * are encoded and flushed atomically; clients decode separately padded pieces; Envoy
 * encodes each frame on its own too).
 */
export class GrpcWebTextEncoder {
  private readonly frames = new GrpcFrameBoundaries();
  /** Bytes of the current frame not yet encoded (fewer than 3). */
  private rest: Buffer | null = null;

  /** The base64 of what can go out now ('' when all of `chunk` waits). */
  encode(chunk: Buffer): string {
    const end = this.frames.lastEnd(chunk);
    const rest = this.rest;
    const data = rest === null ? chunk : Buffer.concat([rest, chunk]);
    // `whole`: the bytes up to the last frame's end, encoded with their padding.
    const whole = end === -1 ? 0 : end + (rest === null ? 0 : rest.length);
    const cut = whole + Math.floor((data.length - whole) / 3) * 3;
    // The few bytes kept are copied: undici may reuse the memory of a chunk it handed over.
    this.rest = cut === data.length ? null : Buffer.from(data.subarray(cut));
    if (whole === 0) return data.subarray(0, cut).toString('base64');
    return data.subarray(0, whole).toString('base64') + data.subarray(whole, cut).toString('base64');
  }

  /** The base64 of the bytes still held (a frame cut short), padded; '' when none. */
  end(): string {
    const rest = this.rest;
    this.rest = null;
    return rest === null ? '' : rest.toString('base64');
  }
}
