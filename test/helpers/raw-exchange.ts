import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** `code` of a JSON error envelope, if the body is one. */
  code: string | undefined;
  /** From the call to the complete answer. */
  ms: number;
}

export interface RawExchange {
  sock: Socket;
  /** The answer, or null when the connection closed (or `timeoutMs` passed) without a complete one. */
  answer: Promise<RawAnswer | null>;
  /** Whether the answer (or the close) came. */
  settled(): boolean;
}

/**
 * One request on its own TCP connection, written as given (`head` lines without the blank
 * line, then `body`), the socket kept so the caller can write more body bytes or cut it.
 * Reads one answer framed by Content-Length (gateway envelopes and the test upstreams' answers).
 */
export function rawExchange(port: number, head: string[], body: Buffer | string = '', timeoutMs = 30_000): RawExchange {
  const t0 = performance.now();
  const sock = connect({ host: '127.0.0.1', port });
  sock.on('error', () => undefined); // a cut connection is reported as a null answer
  let settled = false;
  const answer = new Promise<RawAnswer | null>((resolve) => {
    let buf = Buffer.alloc(0);
    const finish = (a: RawAnswer | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(a);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    sock.on('connect', () => sock.write(`${head.join('\r\n')}\r\n\r\n`, 'latin1', () => (body.length ? sock.write(body) : undefined)));
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const sep = buf.indexOf('\r\n\r\n');
      if (sep === -1) return;
      const [line, ...lines] = buf.subarray(0, sep).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buf.length < sep + 4 + length) return;
      const text = buf.subarray(sep + 4, sep + 4 + length).toString('utf8');
      let code: string | undefined;
      try {
        code = (JSON.parse(text) as { code?: string }).code;
      } catch {
        code = undefined;
      }
      finish({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(line ?? '')?.[1] ?? 0), headers, body: text, code, ms: performance.now() - t0 });
    });
    sock.on('close', () => finish(null));
  });
  return { sock, answer, settled: () => settled };
}
