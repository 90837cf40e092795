// How many bytes fit one uWS cork (see cork-room.ts for why it matters). No imports: the
// compiled fixed replies (response-head.ts) are sized with it.

/** uWS's LoopData::CORK_BUFFER_SIZE. */
export const CORK_BUFFER = 16 * 1024;

/**
 * What uWS adds around our bytes in one cork: "HTTP/1.1 ", line ends, Date, its mark
 * header, Content-Length or Transfer-Encoding, a chunk's size line and CRLFs.
 */
const UWS_LINES = 512;

/**
 * Body bytes that fit one cork with a head of `headChars` string characters. uWS.js
 * encodes strings as UTF-8: at most 3 bytes a UTF-16 unit.
 */
export function corkRoom(headChars: number): number {
  return CORK_BUFFER - UWS_LINES - 3 * headChars;
}

/** Whether `body` (bytes, or a string of at most 3 bytes a character) fits one cork after a head of `headChars`. */
export function fitsCork(headChars: number, body: string | Buffer): boolean {
  const room = corkRoom(headChars);
  if (typeof body !== 'string') return body.length <= room;
  return body.length * 3 <= room || Buffer.byteLength(body) <= room;
}
