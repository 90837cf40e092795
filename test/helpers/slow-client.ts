import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A request head that a slow client never finishes sending. */
export const SLOW_HEAD = 'GET / HTTP/1.1\r\nHost: a.test\r\nX-Slow: ' + 'a'.repeat(1_000);

export interface Ended {
  /** ms from the connect() call to the server's FIN (or reset). */
  afterMs: number;
  text: string;
  how: string;
}

/** A connection that sends HEAD one byte a second (phase spread over the second) until answered. */
export function slowClient(port: number, localAddress: string, bytesPerSecond = 1, head = SLOW_HEAD): { socket: Socket; ended: Promise<Ended> } {
  const start = performance.now();
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  let text = '';
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const drip = () => {
    if (text || socket.destroyed || sent >= head.length) return;
    socket.write(head[sent++]!);
    timer = setTimeout(drip, 1_000 / bytesPerSecond);
  };
  socket.once('connect', () => (timer = setTimeout(drip, Math.random() * (1_000 / bytesPerSecond))));
  const ended = new Promise<Ended>((resolve) => {
    const done = (how: string) => {
      clearTimeout(timer);
      resolve({ afterMs: performance.now() - start, text, how });
    };
    socket.setEncoding('latin1').on('data', (d: string) => {
      text += d;
      clearTimeout(timer); // answered: no byte after the answer (it would meet a reset)
    });
    socket.once('end', () => done('end'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(`error ${err.code}`));
    socket.once('close', () => done('close'));
  });
  return { socket, ended };
}

