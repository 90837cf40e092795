import type { Case, Expect } from './conformance-cases.js';

/** Header-field, request-line, size and pipelining cases (RFC 9112 §2-§5, §9.3). */

const H = 'Host: a.test\r\n';
const get = (headers: string, line = 'GET /h HTTP/1.1') => `${line}\r\n${H}${headers}\r\n`;
const REFUSE = { status: 400, close: true };
const TOO_LARGE = { status: [400, 414, 431], close: true };
const c = (name: string, send: string | string[], expect: Expect, extra: Partial<Case> = {}): Case => ({
  name,
  send: typeof send === 'string' ? [send] : send,
  expect,
  ...extra,
});
const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-F${i}: ${i}\r\n`).join('');

export const HEADER_CASES: Case[] = [
  c('field: obs-fold (SP)', get('X-A: 1\r\n 2\r\n'), REFUSE),
  c('field: obs-fold (HTAB)', get('X-A: 1\r\n\t2\r\n'), REFUSE),
  c('field: space before colon', get('X-A : 1\r\n'), REFUSE),
  c('field: tab before colon', get('X-A\t: 1\r\n'), REFUSE),
  c('field: NUL in value', get('X-A: a\0b\r\n'), REFUSE),
  c('field: lone CR in value', get('X-A: a\rb\r\n'), { served: 0 }),
  c('field: LF in value (bare LF line end)', get('X-A: a\nb\r\n'), REFUSE),
  c('field: NUL in name', get('X-\0A: 1\r\n'), REFUSE),
  c('field: CR in name', get('X-\rA: 1\r\n'), REFUSE),
  c('field: LF in name', get('X-\nA: 1\r\n'), REFUSE),
  c('field: empty name', get(': x\r\n'), { served: 1 }),
  c('field: space in name', get('X A: 1\r\n'), REFUSE),
  c('field: "(" in name', get('X(A): 1\r\n'), REFUSE),
  c('field: "@" in name', get('X@A: 1\r\n'), REFUSE),
  c('field: byte 0xff in name', get('X\xffA: 1\r\n'), REFUSE),
  c('field: no colon', get('X-A 1\r\n'), REFUSE),
  c('field: underscore in name', get('X_A: 1\r\n'), { served: 1 }),
  c('field: DEL in value', get('X-A: a\x7fb\r\n'), { status: 400 }),
];

export const LINE_CASES: Case[] = [
  c('line: origin form', get(''), { served: 1 }),
  c('line: absolute form', get('', 'GET http://a.test/x HTTP/1.1'), { status: [400, 505], close: true }),
  c('line: asterisk form', get('', 'OPTIONS * HTTP/1.1'), { status: [400, 505], close: true }),
  c('line: authority form (CONNECT)', get('', 'CONNECT a.test:443 HTTP/1.1'), { status: [400, 405, 505], close: true }),
  c('line: HTTP/1.2', get('', 'GET /h HTTP/1.2'), { status: [400, 505], close: true }),
  c('line: HTTP/2.0', get('', 'GET /h HTTP/2.0'), { status: [400, 505], close: true }),
  c('line: HTTP/0.9 (no version)', 'GET /h\r\n', { status: [400, 505], close: true }),
  c('line: lower-case version', get('', 'GET /h http/1.1'), { status: [400, 505], close: true }),
  c('line: HTTP/1.0 no keep-alive', get('', 'GET /h HTTP/1.0'), { status: 505, close: true }),
  c('line: HTTP/1.0 keep-alive', get('Connection: keep-alive\r\n', 'GET /h HTTP/1.0'), { status: 505, close: true }),
  c('line: lower-case method', get('', 'get /h HTTP/1.1'), { status: 400 }),
  c('line: mixed-case method', get('', 'Post /h HTTP/1.1'), { status: 400 }),
  c('line: extension method (PURGE)', get('', 'PURGE /h HTTP/1.1'), { served: 1 }),
  c('line: double space', get('', 'GET  /h HTTP/1.1'), { status: [400, 505], close: true }),
  c('line: tab separator', get('', 'GET\t/h HTTP/1.1'), { status: [400, 505], close: true }),
  c('line: leading empty line', `\r\n${get('')}`, { served: 0 }),
  c('line: bare LF head', 'GET /h HTTP/1.1\nHost: a.test\n\n', { status: [400, 505], close: true }),
  c('host: missing', 'GET /h HTTP/1.1\r\n\r\n', REFUSE),
  c('host: two', get('Host: b.test\r\n'), REFUSE),
];

export const SIZE_CASES: Case[] = [
  c('size: 10 KB target', get('', `GET /${'a'.repeat(10_240)} HTTP/1.1`), TOO_LARGE),
  c('size: 70 KB target', get('', `GET /${'a'.repeat(71_680)} HTTP/1.1`), TOO_LARGE),
  c('size: one 20 KB field', get(`X-Big: ${'b'.repeat(20_480)}\r\n`), TOO_LARGE),
  c('size: 64 KB of fields', get(`X-Big: ${'b'.repeat(4_000)}\r\n`.repeat(16)), TOO_LARGE),
  c('size: 60 fields', get(fields(60)), { served: 1 }),
  c('size: 100 fields', get(fields(100)), { status: [400, 431], close: true }),
  c('size: 200 fields', get(fields(200)), { status: [400, 431], close: true }),
];

/** uWS closes a connection whose next request arrives while one waits for its upstream ("HTTP/1.1 pipelining"). */
const PIPELINE_REFUSED = { served: 0, close: true };

export const PIPELINE_CASES: Case[] = [
  c('pipeline: two GETs', get('') + get(''), PIPELINE_REFUSED),
  c('pipeline: three GETs', get('') + get('') + get(''), PIPELINE_REFUSED),
  c('pipeline: POST with body, then GET', `POST /h HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello` + get(''), PIPELINE_REFUSED),
  c('pipeline: chunked POST, then GET', `POST /h HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` + get(''), PIPELINE_REFUSED),
  c('expect: 100-continue, body in a second write', [`POST /h HTTP/1.1\r\n${H}Expect: 100-continue\r\nContent-Length: 5\r\n\r\n`, 'hello'], { served: 1 }),
  c('head: split over three writes', ['GET /h HT', 'TP/1.1\r\nHo', 'st: a.test\r\n\r\n'], { served: 1 }),
  c('incomplete: head without blank line', `GET /h HTTP/1.1\r\n${H}`, {}, { incomplete: true }),
];
