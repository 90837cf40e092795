import { Readable, Transform } from 'node:stream';

/**
 * A request body read once for every step that asks (group members may ask at once),
 * and what the proxy sends afterwards: the bytes read, or the live stream (the rest of
 * it after a read that stopped early), cut at the route's cap (request-size-limit).
 * Unit-tested in test/unit/shared-body.test.ts.
 */
export class SharedBody {
  /** The body went past the route's cap: the proxy answers 413. */
  tooLarge = false;
  private routeCap = Infinity;
  /** The whole body, once a read finished. */
  private buffered: Buffer | null = null;
  private reading: Promise<Buffer> | null = null;
  /** Where the shared read stops: the largest limit asked for so far, never beyond the route's cap. */
  private readCap = 0;
  /**
   * What the shared read took before it went past every caller's limit, when it stayed
   * within the route's cap: the stream is paused, not destroyed, because the step that
   * asked may not count (failureStrategy Continue, a group member that lost), and then the
   * upstream gets these bytes and the rest.
   */
  private partial: Buffer[] | null = null;
  /** upstream() gave the live stream (or the rest of it) to the proxy: no step reads it any more. */
  private handedOut = false;

  constructor(private readonly body: Readable) {}

  /** Caps the body for every reader and for the upstream: past `maxBytes` the client gets 413. */
  limit(maxBytes: number): void {
    this.routeCap = Math.min(this.routeCap, maxBytes);
  }

  /** The whole body, the same bytes for every caller, or a rejection past `limit` or the route's cap. */
  async read(limit: number): Promise<Buffer> {
    // The proxy is already sending the live body (a group member still running after its
    // group settled): reading it here would pause the upload under the proxy's feet.
    if (this.handedOut && this.buffered === null) throw new Error('the request body is already on its way upstream');
    const cap = Math.min(limit, this.routeCap);
    if (this.partial !== null && cap > this.readCap) {
      // An earlier reader went past its own, smaller limit (its failure did not count):
      // the stream was paused, not lost, so this one reads on from there.
      const chunks = this.partial;
      this.partial = null;
      this.readCap = cap;
      this.reading = this.readWhole(chunks);
    }
    this.readCap = Math.max(this.readCap, cap);
    this.reading ??= this.readWhole([]);
    const body = await this.reading;
    if (body.length > limit || body.length > this.routeCap) {
      if (body.length > this.routeCap) this.tooLarge = true;
      throw new Error(`body over ${Math.min(limit, this.routeCap)} bytes`);
    }
    return body;
  }

  private readWhole(already: Buffer[]): Promise<Buffer> {
    const body = this.body;
    return new Promise((resolve, reject) => {
      const chunks = already;
      let size = 0;
      for (const c of already) size += c.length;
      if (size > this.readCap) {
        this.partial = chunks; // still past this reader's limit: kept for the next
        return reject(new Error(`body over ${this.readCap} bytes`));
      }
      // Read on after a pause: the body may have ended meanwhile ('end' came with no listener).
      if (body.readableEnded) return resolve((this.buffered = Buffer.concat(chunks)));
      const stop = () => {
        body.pause(); // before the listener goes: a flowing stream would drop what follows
        body.off('data', onData);
        body.off('end', onEnd);
        body.off('error', onError);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
        if (size <= this.readCap) return;
        stop();
        if (size > this.routeCap) {
          this.tooLarge = true;
          body.destroy();
        } else this.partial = chunks;
        reject(new Error(`body over ${this.readCap} bytes`));
      };
      const onEnd = () => {
        stop();
        resolve((this.buffered = Buffer.concat(chunks)));
      };
      const onError = (err: Error) => {
        stop();
        reject(err);
      };
      body.on('data', onData);
      body.once('end', onEnd);
      body.once('error', onError);
      body.resume(); // a 'data' listener alone does not restart a stream paused by an earlier reader
    });
  }

  /** A step answered: the body will not be read. */
  discard(): void {
    this.body.destroy();
  }

  /** What the proxy sends: the buffered body if a step read it (whole, so a Buffer), else the live stream. */
  upstream(): Buffer | Readable | null {
    if (this.buffered !== null) {
      // A cap set after a step read the body (limitBody after body-validate) still holds.
      if (this.buffered.length > this.routeCap) return this.refused(this.routeCap);
      return this.buffered.length ? this.buffered : null;
    }
    this.handedOut = true;
    // A step still reading (a group's losing member): the upstream gets those same bytes.
    if (this.reading !== null) return Readable.from(this.afterRead(this.reading, this.routeCap));
    if (this.routeCap === Infinity) return this.body;
    return this.limited(this.routeCap, 0);
  }

  private async *afterRead(reading: Promise<Buffer>, limit: number): AsyncGenerator<Buffer> {
    let body: Buffer;
    try {
      body = await reading;
    } catch (err) {
      // Past the reading step's limit but within the route's: what was read, then the rest.
      const partial = this.partial;
      if (partial === null) throw err;
      this.partial = null;
      let seen = 0;
      for (const chunk of partial) {
        seen += chunk.length;
        yield chunk;
      }
      yield* this.limited(limit, seen);
      return;
    }
    if (body.length > limit) throw this.overLimit(limit);
    if (body.length) yield body;
  }

  /** The live body (`already` bytes before it) passed on until it goes past `limit`: then cut, and the proxy answers 413. */
  private limited(limit: number, already: number): Readable {
    const source = this.body;
    let seen = already;
    const counted = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        seen += chunk.length;
        if (seen <= limit) return cb(null, chunk);
        source.destroy();
        cb(this.overLimit(limit));
      },
    });
    source.on('error', (err) => counted.destroy(err));
    return source.pipe(counted);
  }

  private overLimit(limit: number): Error {
    this.tooLarge = true;
    return new Error(`request body over ${limit} bytes`);
  }

  /** A body that fails at once: the proxy answers 413 (tooLarge). */
  private refused(limit: number): Readable {
    const err = this.overLimit(limit);
    return new Readable({
      read() {
        this.destroy(err);
      },
    });
  }
}
