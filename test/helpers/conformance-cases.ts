/**
 * HTTP/1.1 conformance cases for the data port, message framing (RFC 9112 §6-§7): the
 * exact bytes a client sends and what the gateway must do. Head and request-line cases
 * are in conformance-cases-head.ts.
 */
export interface Expect {
  /** The first final answer's status (any of a list). */
  status?: number | number[];
  /** The server closes the connection after answering. */
  close?: boolean;
  /** This many 2xx answers, each from the upstream; 0: none, and nothing reached the upstream. */
  served?: number;
  /** Known uWS defect: bytes of `/smuggled` reach the upstream inside the first request's body. */
  leaks?: boolean;
}

export interface Case {
  name: string;
  /** Each string one write, latin1. */
  send: string[];
  expect: Expect;
  /** A framing case: also sent with `GET /smuggled` behind it in the same write. */
  framing?: boolean;
  /** Merely incomplete (a body shorter than announced): may wait for a timeout. */
  incomplete?: boolean;
}

const H = 'Host: a.test\r\n';
/** A POST with the given header lines (each ending \r\n) and body. */
const post = (headers: string, body: string) => `POST /f HTTP/1.1\r\n${H}${headers}\r\n${body}`;
const chunked = (te: string, body = '5\r\nhello\r\n0\r\n\r\n') => post(`Transfer-Encoding:${te}\r\n`, body);
const cl = (value: string, body = 'hello') => post(`Content-Length: ${value}\r\n`, body);

const REFUSE = { status: 400, close: true };
/** Answered by the cluster's body timeout (the test sets bodyMs to 1 s). */
const TIMEOUT = { status: 408, close: true };
export const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: a.test\r\n\r\n';
const f = (name: string, send: string, expect: Expect, extra: Partial<Case> = {}): Case => ({ name, send: [send], expect, framing: true, ...extra });

export const FRAMING_CASES: Case[] = [
  f('cl: plain 5', cl('5'), { served: 1 }),
  f('te: chunked', chunked(' chunked'), { served: 1 }),
  f('cl+te both', post('Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'), REFUSE),
  f('te+cl both (te first)', post('Transfer-Encoding: chunked\r\nContent-Length: 5\r\n', '0\r\n\r\n'), REFUSE),
  f('te: gzip (not chunked)', chunked(' gzip', 'hello'), REFUSE),
  f('te: chunked, gzip', chunked(' chunked, gzip'), REFUSE),
  f('te: xchunked', chunked(' xchunked'), REFUSE),
  f('te: chunked, identity', chunked(' chunked, identity'), REFUSE),
  f('te: identity, chunked', chunked(' identity, chunked'), REFUSE),
  f('te: gzip, chunked', chunked(' gzip, chunked'), REFUSE),
  f('te: chunked, chunked', chunked(' chunked, chunked'), REFUSE),
  f('te: two chunked lines', post('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', '5\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('te: CHUNKED upper case', chunked(' CHUNKED'), { served: 1 }),
  f('te: tab before value', chunked('\tchunked'), { served: 1 }),
  f('te: no space', chunked('chunked'), { served: 1 }),
  f('te: trailing space', chunked(' chunked '), { served: 1 }),
  f('te: vertical tab before', chunked(' \x0bchunked'), REFUSE),
  f('te: space before colon', post('Transfer-Encoding : chunked\r\n', '5\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('te: header line led by space', post(' Transfer-Encoding: chunked\r\n', '5\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('te: chunked on HTTP/1.0', `POST /f HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, { status: [400, 505], close: true }),
  f('cl: 005 (leading zeros)', cl('005'), { served: 1 }),
  f('cl: +5', cl('+5'), REFUSE),
  f('cl: -1', cl('-1'), REFUSE),
  f('cl: 5x', cl('5x'), REFUSE),
  f('cl: 0x5', cl('0x5'), REFUSE),
  f('cl: "5 5"', cl('5 5'), REFUSE),
  f('cl: empty', cl(''), REFUSE),
  f('cl: "5, 5" list', cl('5, 5'), REFUSE),
  f('cl: two equal lines', post('Content-Length: 5\r\nContent-Length: 5\r\n', 'hello'), REFUSE),
  f('cl: two different lines', post('Content-Length: 5\r\nContent-Length: 6\r\n', 'hello!'), REFUSE),
  f('cl: 2^53+1', cl('9007199254740993'), {}, { incomplete: true }),
  f('cl: 2^64+5 (overflow)', cl('18446744073709551621'), REFUSE),
  f('chunk: size 2^32+5 (overflow)', chunked(' chunked', '100000005\r\nhello\r\n0\r\n\r\n'), {}, { incomplete: true }),
  f('chunk: size 2^64+5 (overflow)', chunked(' chunked', '10000000000000005\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('chunk: size led by space', chunked(' chunked', ' 5\r\nhello\r\n0\r\n\r\n'), { served: 1 }),
  f('chunk: size 0x5', chunked(' chunked', '0x5\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('chunk: size with junk after', chunked(' chunked', '5z\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('chunk: size +5', chunked(' chunked', '+5\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('chunk: extension 5;a=b', chunked(' chunked', '5;a=b\r\nhello\r\n0\r\n\r\n'), TIMEOUT),
  f('chunk: quoted extension', chunked(' chunked', '5;a="x;y"\r\nhello\r\n0\r\n\r\n'), REFUSE),
  f('chunk: extension, then 70 KB holding a request', chunked(' chunked', `5;a=b\r\nhello\r\n0\r\n\r\n${SMUGGLED}${'x'.repeat(71_680)}`), { leaks: true }, { framing: false }),
  f('chunk: extension with lone CR', chunked(' chunked', '5;a=b\rc\r\nhello\r\n0\r\n\r\n'), TIMEOUT),
  f('chunk: extension ended by LF', chunked(' chunked', '5;a=b\nhello\r\n0\r\n\r\n'), TIMEOUT),
  f('chunk: no CRLF after data', chunked(' chunked', '5\r\nhello0\r\n\r\n'), { served: 1 }),
  f('chunk: data longer than size', chunked(' chunked', '5\r\nhelloXX\r\n0\r\n\r\n'), { served: 1 }),
  f('chunk: bare LF framing', chunked(' chunked', '5\nhello\n0\n\n'), { served: 1 }),
  f('chunk: trailer field', chunked(' chunked', '5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n'), { status: 505, close: true }),
  f('head: bare LF line ends', `POST /f HTTP/1.1\n${H.trim()}\nContent-Length: 5\n\nhello`, { status: 505, close: true }),
  f('incomplete: cl 10, 5 sent', cl('10'), {}, { incomplete: true, framing: false }),
  f('incomplete: no last chunk', chunked(' chunked', '5\r\nhello\r\n'), {}, { incomplete: true, framing: false }),
];
