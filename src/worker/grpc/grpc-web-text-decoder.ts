import { Transform, type TransformCallback } from 'node:stream';

/** A gRPC-Web text body that is not base64: the request cannot go upstream. */
export class GrpcWebTextError extends Error {
  readonly code = 'GRPC_WEB_BAD_BASE64';
  constructor(why: string) {
    super(`gRPC-Web text request body is not valid base64: ${why}`);
  }
}

/** One base64 segment: whole groups of four, padding only in its last group. */
const SEGMENT = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes base64 text whose length is a multiple of 4. A gRPC-Web text body may be
 * separately padded segments one after another (a client encodes each message on its
 * own), and node's decoder stops at the first padding: so each segment up to a padded
 * group is checked and decoded on its own.
 */
export function decodeBase64Groups(text: string): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  while (start < text.length) {
    const eq = text.indexOf('=', start);
    const end = eq === -1 ? text.length : start + (((eq - start) >> 2) << 2) + 4;
    const segment = text.slice(start, end);
    if (!SEGMENT.test(segment)) throw new GrpcWebTextError('a character outside the alphabet, or padding inside a group');
    parts.push(Buffer.from(segment, 'base64'));
    start = end;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** A whole text body decoded at once (a body read whole before it goes upstream). */
export function decodeGrpcWebText(body: Buffer): Buffer {
  if (body.length % 4 !== 0) throw new GrpcWebTextError(`its length ${body.length} is not a multiple of 4`);
  return decodeBase64Groups(body.toString('latin1'));
}

/**
 * A streamed text body decoded as it arrives: each chunk's whole groups of four are
 * decoded, the rest (under 4 characters) waits for the next chunk. A body that ends
 * inside a group, or holds anything but base64, fails the stream with GrpcWebTextError.
 */
export class GrpcWebTextDecoder extends Transform {
  private rest = '';

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const text = this.rest + chunk.toString('latin1');
    const whole = text.length - (text.length % 4);
    this.rest = text.slice(whole);
    if (whole === 0) return done();
    try {
      done(null, decodeBase64Groups(whole === text.length ? text : text.slice(0, whole)));
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.rest.length === 0) return done();
    done(new GrpcWebTextError(`it ends inside a group of four (${this.rest.length} characters left)`));
  }
}
