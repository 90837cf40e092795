// A stand-in for uWS.js's HttpResponse that models the two uWS behaviours the Exchange
// must work around (src/worker/cork-room.ts, Exchange.write):
//  - a 16 KiB cork buffer: a non-optional write (writeStatus, write, end) that makes one
//    cork's bytes exceed it is counted in `overflows` (real uWS may drop that data);
//  - callOnWritable: uWS runs the registered writable callback and then puts it back,
//    over any onWritable registered while it ran.
// The "socket" takes `room` bytes; tryEnd writes what fits, write/end buffer the rest.
import { CORK_BUFFER } from '../../src/worker/engine/uws/cork-room.js';

export class FakeUwsResponse {
  /** Body bytes in the order the client would read them (head bytes are not kept). */
  readonly body: Buffer[] = [];
  overflows = 0;
  corks = 0;
  ended = false;
  private offset = 0;
  private corked = false;
  private corkBytes = 0;
  private writable: ((offset: number) => boolean) | null = null;
  private inWritable = false;
  /** An onWritable was registered from inside a writable callback (uWS then loses it). */
  lostRegistration = false;

  constructor(public room: number) {}

  private nonOptional(n: number): void {
    if (!this.corked) return;
    this.corkBytes += n;
    if (this.corkBytes > CORK_BUFFER) this.overflows++;
  }

  cork(fn: () => void): this {
    if (this.corked) {
      fn();
      return this;
    }
    this.corked = true;
    this.corks++;
    this.corkBytes = 0;
    try {
      fn();
    } finally {
      this.corked = false;
    }
    return this;
  }

  writeStatus(head: string): this {
    this.nonOptional(Buffer.byteLength(head) + 11);
    return this;
  }

  /** Chunked write: uWS buffers whatever the socket does not take; false under backpressure. */
  write(data: Buffer): boolean {
    this.nonOptional(data.length + 12);
    this.body.push(Buffer.from(data));
    this.offset += data.length;
    const took = Math.min(this.room, data.length);
    this.room -= took;
    return took === data.length;
  }

  end(data?: Buffer | string): this {
    const b = data === undefined ? Buffer.alloc(0) : Buffer.from(data);
    this.nonOptional(b.length + 40);
    this.body.push(b);
    this.offset += b.length;
    this.room = Math.max(0, this.room - b.length);
    this.ended = true;
    return this;
  }

  /** Optional: writes what the socket takes now. */
  tryEnd(data: Buffer, total: number): [boolean, boolean] {
    const n = Math.min(this.room, data.length);
    this.body.push(Buffer.from(data.subarray(0, n)));
    this.room -= n;
    this.offset += n;
    if (this.offset === total) this.ended = true;
    return [n === data.length, this.offset === total];
  }

  getWriteOffset(): number {
    return this.offset;
  }

  onWritable(h: (offset: number) => boolean): this {
    if (this.inWritable) this.lostRegistration = true;
    this.writable = h;
    return this;
  }

  /** The socket took `n` more bytes off: runs the writable callback as uWS does (callOnWritable). */
  drain(n: number): void {
    this.room += n;
    const h = this.writable;
    if (h === null || this.ended) return;
    this.inWritable = true;
    try {
      h(this.offset);
    } finally {
      this.inWritable = false;
      // uWS moves the callback it ran back in place, over one registered meanwhile.
      this.writable = h;
    }
  }

  private aborted: (() => void) | null = null;

  onAborted(h: () => void): this {
    this.aborted = h;
    return this;
  }

  /** The client went away before the end: uWS calls the abort handler. */
  abort(): void {
    if (!this.ended) this.aborted?.();
  }
  onData(): this {
    return this;
  }
  endWithoutBody(): this {
    this.ended = true;
    return this;
  }
  /** The gateway closed the connection: uWS calls the abort handler of a response not ended. */
  closed = false;
  close(): this {
    this.closed = true;
    this.abort();
    return this;
  }
  pause(): void {}
  resume(): void {}
  getRemoteAddress(): ArrayBuffer {
    return new Uint8Array([127, 0, 0, 1]).buffer;
  }
}

/** The request half: nothing but what the Exchange reads in its constructor. */
export const fakeUwsRequest = { getQuery: () => undefined, forEach: () => {} };
