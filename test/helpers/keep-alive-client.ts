import { connect, type Socket } from 'node:net';
import type { Json } from './json.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: Json | undefined;
}

/**
 * One keep-alive HTTP/1.1 connection, held open between requests: a request is written as
 * given, its answer framed by Content-Length (the gateway's answers). `closed` resolves with
 * how the connection ended ('end' when the server closed it first).
 */
export class KeepAliveClient {
  readonly socket: Socket;
  readonly closed: Promise<string>;
  /** Every byte received, for diagnostics and for what came after the last answer. */
  received = '';
  private pending = '';
  private wake: (() => void) | null = null;

  constructor(port: number, localAddress = '127.0.0.1') {
    this.socket = connect({ host: '127.0.0.1', port, localAddress });
    this.socket.setEncoding('latin1').on('data', (d: string) => {
      this.received += d;
      this.pending += d;
      this.wake?.();
    });
    this.closed = new Promise((resolve) => {
      this.socket.once('end', () => resolve('end'));
      this.socket.once('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
      this.socket.once('close', () => resolve('close'));
    });
    void this.closed.then(() => this.wake?.());
  }

  connected(): Promise<void> {
    return this.socket.connecting ? new Promise((r) => this.socket.once('connect', () => r())) : Promise.resolve();
  }

  /** Writes `GET path` and resolves with its answer, or null if the connection ends first or `timeoutMs` passes. */
  async get(path: string, timeoutMs = 5_000): Promise<Answer | null> {
    await this.connected();
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
    return this.answer(timeoutMs);
  }

  /** The next complete answer on the connection, or null. */
  async answer(timeoutMs = 5_000): Promise<Answer | null> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void this.closed.then(() => (ended = true));
    for (;;) {
      const a = this.take();
      if (a || ended || Date.now() >= deadline) return a;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, deadline - Date.now());
        this.wake = () => {
          clearTimeout(timer);
          r();
        };
      });
      await Promise.resolve(); // let `ended` settle after a close
    }
  }

  /** Ends our side and waits for the server to close too (it has then counted the close). */
  async end(timeoutMs = 5_000): Promise<string> {
    this.socket.end();
    return Promise.race([this.closed, new Promise<string>((r) => setTimeout(() => r('still open'), timeoutMs).unref())]);
  }

  private take(): Answer | null {
    const sep = this.pending.indexOf('\r\n\r\n');
    if (sep === -1) return null;
    const [statusLine = '', ...lines] = this.pending.slice(0, sep).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).trim().toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    if (this.pending.length < sep + 4 + length) return null;
    const body = Buffer.from(this.pending.slice(sep + 4, sep + 4 + length), 'latin1').toString('utf8');
    this.pending = this.pending.slice(sep + 4 + length);
    let json: Json | undefined;
    try {
      json = JSON.parse(body) as Json;
    } catch {
      json = undefined;
    }
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, body, json };
  }
}
