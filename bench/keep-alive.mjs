// One keep-alive HTTP/1.1 connection for bench/idle-connections.mjs: held open between
// requests, each answer framed by Content-Length (what the gateway's answers carry).
import { connect } from 'node:net';

export class KeepAlive {
  /** Every byte received (latin1), for the report when something is off. */
  received = '';
  #pending = '';
  #wake = null;
  #ended = false;

  constructor(port, host) {
    this.socket = connect({ host, port });
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d) => {
      this.received += d;
      this.#pending += d;
      this.#wake?.();
    });
    /** How the connection ended: 'end' when the server closed it first. */
    this.closed = new Promise((resolve) => {
      this.socket.once('end', () => resolve('end'));
      this.socket.once('error', (err) => resolve(`error ${err.code}`));
      this.socket.once('close', () => resolve('close'));
    }).then((how) => {
      this.#ended = true;
      this.#wake?.();
      return how;
    });
  }

  /** Writes `GET path` and resolves with its answer { status, body }, or null. */
  async get(path, timeoutMs = 5_000) {
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: bench.test\r\n\r\n`);
    return this.answer(timeoutMs);
  }

  /** The next complete answer, or null when the connection ends or `timeoutMs` passes first. */
  async answer(timeoutMs = 5_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const a = this.#take();
      if (a || this.#ended || Date.now() >= deadline) return a;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Ends our side; resolves when the server has closed too, or after `timeoutMs`. */
  end(timeoutMs = 5_000) {
    this.socket.end();
    return Promise.race([this.closed, new Promise((r) => setTimeout(() => r('still open'), timeoutMs).unref())]);
  }

  #take() {
    const sep = this.#pending.indexOf('\r\n\r\n');
    if (sep === -1) return null;
    const head = this.#pending.slice(0, sep);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.#pending.length < sep + 4 + length) return null;
    const body = Buffer.from(this.#pending.slice(sep + 4, sep + 4 + length), 'latin1').toString('utf8');
    this.#pending = this.#pending.slice(sep + 4 + length);
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body };
  }
}
