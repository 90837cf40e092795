import type { Expect } from './conformance-cases.js';

/**
 * Where the node engine's answer to a conformance case differs from the uws engine's and
 * is right by RFC 9112 (node's llhttp parser, the engine on top): each case's expectation
 * on the node engine. The safety verdicts are the same on both engines: nothing refused is
 * forwarded, nothing smuggled, at least as strict as nginx. The table is in
 * docs/reference.md, "HTTP conformance".
 */
export const NODE_EXPECT: Record<string, Expect> = {
  // llhttp refuses framing uWS reads leniently: closed, nothing forwarded (stricter than uws).
  'chunk: bare LF framing': { served: 0 },
  'chunk: data longer than size': { served: 0 },
  'chunk: no CRLF after data': { served: 0 },
  'chunk: size led by space': { served: 0 },
  'field: empty name': { served: 0 },
  // A chunk size llhttp cannot read arrives after the request went to its owner: the connection is closed unanswered.
  'chunk: size +5': { served: 0, close: true },
  // A chunked POST with an extension (allowed), then a whole GET pipelined behind it: both are
  // requests and both go upstream; the 70 KB of junk after them is a parse error that closes the connection.
  'chunk: extension, then 70 KB holding a request': {},
  'chunk: size 0x5': { served: 0, close: true },
  'chunk: size 2^64+5 (overflow)': { served: 0, close: true },
  'chunk: size with junk after': { served: 0, close: true },
  'chunk: extension ended by LF': { served: 0, close: true },
  'chunk: extension with lone CR': { served: 0, close: true },
  // Chunk extensions and trailer fields are allowed (RFC 9112 §7.1.1, §7.1.2): ignored, the body forwarded.
  'chunk: extension 5;a=b': { served: 1 },
  'chunk: quoted extension': { served: 1 },
  'chunk: trailer field': { served: 1 },
  'head: bare LF line ends': { status: 400, close: true },
  // HTTP/1.0 is served (RFC 9112 §2.3); without keep-alive the connection closes after the answer.
  'line: HTTP/1.0 keep-alive': { served: 1 },
  'line: HTTP/1.0 no keep-alive': { served: 1 },
  // llhttp waits for a version: the first head's deadline answers 408 (limits.headerTimeoutMs).
  'line: HTTP/0.9 (no version)': { served: 0 },
  'line: double space': { served: 1 },
  // A server SHOULD ignore empty lines before the request line (RFC 9112 §2.2), as nginx does.
  'line: leading empty line': { served: 1 },
  // Pipelined requests are answered in order (RFC 9112 §9.3.2).
  'pipeline: two GETs': { served: 2 },
  'pipeline: three GETs': { served: 3 },
  'pipeline: POST with body, then GET': { served: 2 },
  'pipeline: chunked POST, then GET': { served: 2 },
  // Any number of fields within limits.maxHeadBytes (the engine lifts node's count); nginx serves these too.
  'size: 100 fields': { served: 1 },
  'size: 200 fields': { served: 1 },
};

/** Node cases answered later than 100 ms on purpose. */
export const NODE_EXCEPTIONS: Record<string, string> = {
  'te: tab before value': 'HTAB is optional whitespace before a field value (RFC 9110 §5.6.3): chunked, and what follows the body is a pipelined request; nginx 1.22 answers 501',
  'line: HTTP/0.9 (no version)': 'llhttp waits for the rest of the request line; the first head deadline answers 408 and closes; nothing is forwarded (nginx: 400)',
};
