// How much one uWS write may carry without risking its loss.
//
// uWS.js (20.30) collects corked writes in a 16 KiB cork buffer per loop. A write that
// does not fit makes uWS send the buffer first and then the new data; when the socket
// cannot take the whole buffer at that moment, uWS keeps the rest of the buffer as
// backpressure but drops the new data (AsyncSocket::uncork returns before writing it).
// For write() and end() nothing reports the loss: a chunked body lost a chunk's bytes
// after its size line (clients failed with "Expected LF after chunk data"), a whole body
// never arrived. tryEnd is safe: its writes are optional, the loss shows as fewer bytes
// written, and the caller retries from the offset.
//
// So every non-optional write is kept small enough to fit an empty cork buffer together
// with the head it goes out with, each in its own cork; larger whole bodies go through
// tryEnd (test/unit/exchange-writes.test.ts, test/streaming-small-socket-buffers.test.ts).
import type { HttpResponse } from './uws.js';
import type { ResponseSink, StallWatch } from '../contract.js';
import { corkRoom } from './cork-size.js';
export { CORK_BUFFER, fitsCork } from './cork-size.js';
import { bodylessHead } from '../../response-head.js';

/** The smallest first piece of a chunked body worth sending with its head in one cork. */
const MIN_PIECE = 1024;

/**
 * A chunk of a chunked body (after `head`, when the response's head is still to go),
 * in pieces that each fit the cork buffer, one cork each: uWS's write() has no optional
 * form. Pieces after a refused one join uWS's backpressure buffer in order. Returns
 * false under backpressure, with the sink's stall watch started; `onDrain` then runs once the socket is
 * writable again.
 */
export function writeChunked(res: HttpResponse, chunk: Buffer, head: string | null, onDrain: () => void, sink: ResponseSink): boolean {
  let room = corkRoom(head === null ? 0 : head.length);
  if (head !== null && room < MIN_PIECE) {
    const alone = head;
    res.cork(() => res.writeStatus(alone)); // an unusually large head goes out alone
    head = null;
    room = corkRoom(0);
  }
  let ok = true;
  for (let off = 0; off < chunk.length; off += room, room = corkRoom(0)) {
    const piece = off === 0 && chunk.length <= room ? chunk : chunk.subarray(off, off + room);
    const h = head;
    head = null;
    res.cork(() => {
      if (h !== null) res.writeStatus(h);
      if (!res.write(piece)) ok = false;
    });
  }
  if (ok) return true;
  const stall = sink.stallWatch();
  stall.held(res.getWriteOffset());
  res.onWritable(() => drainAndResume(res, onDrain, stall));
  return false;
}

/**
 * The writable callback of a chunked body. While an onWritable callback is registered,
 * uWS leaves its own backpressure buffer alone on writable events, so a chunk's tail
 * that did not fit the socket would wait for the upstream's next bytes. An empty cork makes uWS send what it holds (and
 * keep polling while some is left). The producer resumes after the callback, never
 * inside it (see Exchange.write).
 */
function drainAndResume(res: HttpResponse, onDrain: () => void, stall: StallWatch): boolean {
  stall.clear(); // the client took bytes: what waits next is the producer
  res.cork(noop);
  setImmediate(onDrain);
  return true;
}

const noop = (): void => {};

/**
 * A whole body with its head, sent with tryEnd and retried from uWS's offset when the
 * socket can take more; `ended` runs once its last byte went out. `stall` runs while the
 * rest waits for the client.
 */
export function endWithTryEnd(res: HttpResponse, head: string, body: Buffer, ended: () => void, stall: StallWatch): void {
  res.cork(() => {
    res.writeStatus(head);
    const start = res.getWriteOffset();
    const [, done] = res.tryEnd(body, body.length);
    if (done) return ended();
    stall.held(res.getWriteOffset());
    res.onWritable((offset) => {
      const [sent, finished] = res.tryEnd(body.subarray(offset - start), body.length);
      if (finished) ended();
      else stall.held(res.getWriteOffset());
      return sent;
    });
  });
}

/** The head (with the length, if known) and the end, no body: see bodylessHead for why this way. */
export function endBodyless(res: HttpResponse, head: string, contentLength: number | undefined, close: boolean): void {
  res.cork(() => {
    res.writeStatus(bodylessHead(head, contentLength, close));
    res.endWithoutBody(); // never with arguments: see bodylessHead
  });
}
