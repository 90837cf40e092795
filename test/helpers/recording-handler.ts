import type { Dispatcher } from 'undici';
import type { Upstream } from '../../src/contracts/upstream.js';

/** What a dispatch handler was told, in order. */
export interface Recorded {
  /** Callbacks as they came: connect, headers, data, complete, error. */
  events: string[];
  status: number;
  /** The raw head as the handler got it (name, value, … Buffers). */
  raw: Buffer[];
  body: Buffer;
  /** onComplete's argument; undefined until it is called. */
  trailers: string[] | null | undefined;
  error: Error | null;
  /** The connection ConnectionAware was told of, and whether it was reused. */
  connection: { conn: Upstream; reused: boolean } | null;
}

export interface RecordingHandler {
  handler: Dispatcher.DispatchHandler;
  rec: Recorded;
  /** Resolves once onComplete or onError was called. */
  done: Promise<Recorded>;
  /** The abort onConnect gave (null before it). */
  abort(err?: Error): void;
  /** The resume onHeaders gave. */
  resume(): void;
  /** Resolves at the next onData (or at once with the data so far when some came). */
  nextData(): Promise<Buffer>;
}

/**
 * A handler that records undici's callbacks; `pause` decides what onHeaders and onData
 * return (false pauses the response until resume()).
 */
export function recordingHandler(o: { pause?: (what: 'headers' | 'data', rec: Recorded) => boolean } = {}): RecordingHandler {
  const rec: Recorded = { events: [], status: 0, raw: [], body: Buffer.alloc(0), trailers: undefined, error: null, connection: null };
  let abort: ((err?: Error) => void) | null = null;
  let resume: (() => void) | null = null;
  let settle!: (r: Recorded) => void;
  const done = new Promise<Recorded>((r) => (settle = r));
  let dataWaiter: ((b: Buffer) => void) | null = null;
  let unread: Buffer[] = [];
  const handler = {
    onConnection(conn: Upstream, reused: boolean) {
      rec.connection = { conn, reused };
    },
    onConnect(a: (err?: Error) => void) {
      rec.events.push('connect');
      abort = a;
    },
    onHeaders(status: number, raw: Buffer[], r: () => void) {
      rec.events.push(`headers ${status}`);
      rec.status = status;
      rec.raw = raw;
      resume = r;
      return !(o.pause?.('headers', rec) ?? false);
    },
    onData(chunk: Buffer) {
      if (rec.events.at(-1) !== 'data') rec.events.push('data');
      rec.body = Buffer.concat([rec.body, chunk]);
      if (dataWaiter) {
        const w = dataWaiter;
        dataWaiter = null;
        w(chunk);
      } else unread.push(chunk);
      return !(o.pause?.('data', rec) ?? false);
    },
    onComplete(trailers: string[] | null) {
      rec.events.push('complete');
      rec.trailers = trailers;
      settle(rec);
    },
    onError(err: Error) {
      rec.events.push('error');
      rec.error = err;
      settle(rec);
    },
  } as unknown as Dispatcher.DispatchHandler;
  return {
    handler,
    rec,
    done,
    abort: (err) => abort?.(err),
    resume: () => resume?.(),
    nextData: () => {
      if (unread.length) {
        const b = Buffer.concat(unread);
        unread = [];
        return Promise.resolve(b);
      }
      return new Promise((r) => (dataWaiter = r));
    },
  };
}

/** The raw head as [name, value] strings. */
export const headPairs = (raw: Buffer[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1')]);
  return out;
};
