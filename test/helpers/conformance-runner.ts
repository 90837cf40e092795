import { connect, createServer, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { sleep } from './wait.js';

/** What one raw exchange showed: every response status in order (1xx included) and how the connection ended. */
export interface Outcome {
  statuses: number[];
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** From the last write to the first response byte or the close; null: neither came. */
  ms: number | null;
  /** The bytes received, latin1, for diagnostics. */
  raw: string;
}

export interface SendOptions {
  /** Final (non-1xx) responses to wait for before the settle window. */
  want: number;
  /** After `want` answers, how long to watch for a close (or more answers). */
  settleMs: number;
  timeoutMs: number;
}

/**
 * Opens a fresh TCP connection, writes each piece as its own write (30 ms apart, so they
 * arrive as separate reads), and reads responses as raw-http.ts does: by Content-Length,
 * chunked, bodyless status, or (no length) until the close.
 */
export function sendRaw(port: number, writes: string[], o: SendOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    let sentAt = 0;
    let ms: number | null = null;
    let settle: NodeJS.Timeout | undefined;
    const done = (closed: boolean) => {
      clearTimeout(timer);
      clearTimeout(settle);
      sock.destroy();
      resolve({ statuses: parseAll(buf, closed), closed, ms, raw: buf.toString('latin1') });
    };
    const timer = setTimeout(() => done(false), o.timeoutMs);
    const firstSign = () => (ms ??= sentAt ? Date.now() - sentAt : 0);
    sock.on('connect', async () => {
      for (const [i, w] of writes.entries()) {
        if (i > 0) await sleep(30);
        if (sock.destroyed) return;
        sock.write(Buffer.from(w, 'latin1'));
      }
      sentAt = Date.now();
    });
    sock.on('data', (c: Buffer) => {
      firstSign();
      buf = Buffer.concat([buf, c]);
      if (!settle && parseAll(buf, false).filter((s) => s >= 200).length >= o.want) settle = setTimeout(() => done(false), o.settleMs);
    });
    sock.on('end', () => (firstSign(), done(true)));
    sock.on('error', () => (firstSign(), done(true)));
  });
}

/** The statuses of the complete responses in `buf`; `closed`: one without a length ends at the close. */
export function parseAll(buf: Buffer, closed: boolean): number[] {
  const out: number[] = [];
  let off = 0;
  for (;;) {
    const sep = buf.indexOf('\r\n\r\n', off);
    if (sep === -1) return out;
    const head = buf.subarray(off, sep).toString('latin1');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? NaN);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
    let end: number;
    if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
      const last = buf.indexOf('\r\n0\r\n\r\n', sep);
      if (last === -1) return out;
      end = last + 7;
    } else if (length) end = sep + 4 + Number(length[1]);
    else if (status < 200 || status === 204 || status === 304) end = sep + 4;
    else if (closed) end = buf.length;
    else return out;
    if (end > buf.length) return out;
    out.push(status);
    off = end;
  }
}

/** A TCP pass-through in front of an upstream that keeps every byte it forwards to it. */
export interface Tap {
  port: number;
  /** All bytes received so far, latin1. */
  text(): string;
}

export async function startTap(t: TestContext, upstreamPort: number): Promise<Tap> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((c) => {
    const u = connect({ host: '127.0.0.1', port: upstreamPort });
    for (const s of [c, u]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    c.on('data', (b: Buffer) => chunks.push(b));
    c.pipe(u).on('close', () => c.destroy());
    u.pipe(c).on('close', () => u.destroy());
  });
  await new Promise<void>((r) => server.listen({ host: '127.0.0.1', port: 0 }, r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as { port: number }).port, text: () => Buffer.concat(chunks).toString('latin1') };
}
