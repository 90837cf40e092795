import type { OutgoingHttpHeaders } from 'node:http2';
import type { StaticReply } from '../../response-head.js';
import type { IdEcho } from '../contract.js';
import { h1Headers, h1Lines, h1Tail, h2Fields, h2Headers, h2Tail, idNameOf } from './response-headers.js';

/** A fixed reply's own lines as node takes them, with the lines named `idName` left out; each made on first need. */
interface NodeLines {
  idName: string;
  h1: string[] | null;
  h2: OutgoingHttpHeaders | null;
}

// A route's fixed reply is built once per generation and sent many times: its lines are filtered and encoded once, not per answer.
const cache = new WeakMap<StaticReply, NodeLines>();

/**
 * The cached lines of a route's fixed reply (it carries its route's meter); null for an
 * envelope, which is made per request (its traceId): an entry each would cost more than it saves.
 */
function linesOf(r: StaticReply, id: IdEcho): NodeLines | null {
  if (r.meter === undefined) return null;
  const idName = idNameOf(id);
  let lines = cache.get(r);
  if (lines === undefined || lines.idName !== idName) {
    lines = { idName, h1: null, h2: null };
    cache.set(r, lines);
  }
  return lines;
}

const lengthOf = (r: StaticReply): number | undefined => (r.bodyless ? undefined : r.bodyBytes);

/** A fixed reply's HTTP/1.1 header list, as h1Headers makes it: its own lines, then the id echo, the length and the close. */
export function staticH1Headers(r: StaticReply, id: IdEcho, close: boolean): string[] {
  const lines = linesOf(r, id);
  if (lines === null) return h1Headers(r.headers, id, lengthOf(r), close);
  lines.h1 ??= h1Lines(r.headers, lines.idName);
  return h1Tail(lines.h1.slice(), id, lengthOf(r), close);
}

/** A fixed reply's h2 header object, as h2Headers makes it: its own lines, then the id echo and the length. */
export function staticH2Headers(r: StaticReply, id: IdEcho): OutgoingHttpHeaders {
  const lines = linesOf(r, id);
  if (lines === null) return h2Headers(r.headers, id, lengthOf(r));
  lines.h2 ??= h2Fields(r.headers, lines.idName);
  return h2Tail(Object.assign({}, lines.h2), id, lines.idName, lengthOf(r));
}
