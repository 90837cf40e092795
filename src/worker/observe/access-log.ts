import { writeSync } from 'node:fs';
import sonicBoom, { type SonicBoom as SonicBoomType } from 'sonic-boom';

// sonic-boom is CommonJS: its class is the module itself (a type-only named export in its typings).
const SonicBoom = sonicBoom as unknown as typeof SonicBoomType;
import type { Logger } from '../../shared/logger.js';
import { accessLineFormat, type AccessLineFormat, type AccessLogSettings } from './access-line.js';
import type { RecordSink } from './observer.js';
import type { RequestRecord } from './request-record.js';
import { LineBuffer } from './line-buffer.js';

/** SonicBoom in buffer mode takes Buffers (its typings know only strings); `fd`: its file, -1 until open. */
type ByteSink = { write(bytes: Buffer): boolean; readonly fd: number };

/** Writes at most this many bytes at once to a pipe: Linux's PIPE_BUF, the size the kernel writes whole. */
const PIPE_BUF = 4096;
/** Lines held while the file or pipe cannot take them; past this they are dropped (and counted). */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
const WARN_EVERY_MS = 10_000;
/**
 * Lines are handed to SonicBoom in chunks of at most this many bytes. Each write is a hop to
 * libuv's thread pool, whose thread may wake on the worker's own busy core: two context
 * switches and cold caches per write, so fewer, larger writes. On stdout a chunk is at most PIPE_BUF.
 */
const FILE_CHUNK_BYTES = 256 * 1024;
/** A chunk still gathering reaches the file or pipe at least this often. */
const GATHER_MS = 200;

/**
 * worker.json `log.access`: one line per sampled request, written without blocking the
 * worker (SonicBoom, pino's asynchronous destination, used directly: pino's own exit hook
 * would flush it even while a reopen is under way, and throw) to the file, or to stdout.
 *
 * Every worker opens the file itself in append mode (O_APPEND): the kernel places each
 * write at the end, and a write holds whole lines, so workers' lines never interleave
 * within a line. On stdout, a pipe shared by every process, a write is at most PIPE_BUF
 * bytes so that the kernel writes it whole too (a single longer line is the exception).
 */
export class AccessLog implements RecordSink {
  private readonly out: SonicBoomType;
  private readonly line: AccessLineFormat;
  private readonly sample: number;
  /** Nothing written to `out` is still waiting to reach the file. */
  private idle = true;
  /** A write handed to SonicBoom may still be on libuv's thread pool (no 'drain' or 'error' since). */
  private writing = false;
  /** EAGAIN on a full pipe is retried until then (a bound only while the worker exits). */
  private giveUpAt = Infinity;
  private dropped = 0;
  private failures = 0;
  private lastWarn = 0;
  /** Lines gathered for the next write; `hand()` makes them one write. */
  private readonly lines: LineBuffer;
  /** `out`, as the Buffers it takes in buffer mode. */
  private readonly bytesOut: ByteSink;
  /**
   * Records of this turn of the event loop, formatted together after its requests: one line
   * at a time between requests cost the worker about 3 % more CPU per request (two builds
   * loaded at once) than the same lines in one pass, whose code and data stay in the caches.
   */
  private readonly queued: RequestRecord[] = [];
  /** A pass over `queued` is scheduled (setImmediate); only that pass clears it. */
  private formatting = false;

  constructor(
    private readonly settings: AccessLogSettings,
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
  ) {
    this.line = accessLineFormat(settings);
    this.sample = settings.sample;
    const file = settings.path;
    this.out = new SonicBoom({
      dest: file ?? 1,
      sync: false,
      contentMode: 'buffer',
      mkdir: file !== undefined,
      ...(file === undefined ? { maxWrite: PIPE_BUF } : {}),
      maxLength: MAX_BUFFERED_BYTES,
      retryEAGAIN: () => Date.now() < this.giveUpAt,
    });
    this.bytesOut = this.out as unknown as ByteSink;
    this.lines = new LineBuffer(file === undefined ? PIPE_BUF : FILE_CHUNK_BYTES, (bytes) => this.hand(bytes));
    setInterval(() => this.lines.hand(), GATHER_MS).unref();
    this.out.on('drain', () => {
      this.idle = true;
      this.writing = false;
    });
    this.out.on('drop', () => {
      this.dropped++;
      this.warn();
    });
    // Unheard, an 'error' would end the worker: a full disk or a removed folder costs lines, never requests.
    this.out.on('error', (err: Error) => {
      this.writing = false; // SonicBoom keeps the failed bytes and writes them first on a flush
      this.failed(err);
    });
  }

  /** Whether a request is logged: drawn against `sample` (1 draws nothing), once per request. */
  sampled(): boolean {
    return this.sample >= 1 || this.random() < this.sample;
  }

  /** Writes a sampled request's line (at the end of this turn of the event loop). Never throws and never waits. */
  write(r: RequestRecord): void {
    this.idle = false;
    this.queued.push(r);
    if (!this.formatting) {
      this.formatting = true;
      setImmediate(this.formatTurn);
    }
  }

  private readonly formatTurn = () => {
    this.formatting = false;
    this.formatQueued();
  };

  /** The queued records as lines, in the order written. */
  private formatQueued(): void {
    const q = this.queued;
    for (let i = 0; i < q.length; i++) this.line(q[i]!, this.lines);
    q.length = 0;
  }

  /** Every record written so far, as lines handed to `out` (before a reopen or a flush). */
  private handAll(): void {
    this.formatQueued();
    this.lines.hand();
  }

  private hand(bytes: Buffer): void {
    try {
      this.bytesOut.write(bytes);
      this.writing = true;
    } catch (err) {
      // SonicBoom throws when its file never opened (fd -1) or it was destroyed
      this.failed(err as Error);
    }
  }

  private failed(err: Error): void {
    this.failures++;
    this.warn(err);
  }

  /** logrotate renamed the file: later lines go to a new one at the configured path. */
  reopen(): void {
    if (this.settings.path === undefined) return;
    this.handAll(); // lines of requests before the signal belong to the renamed file
    try {
      this.out.once('ready', () => this.log.info({ path: this.settings.path }, 'access log reopened'));
      this.out.reopen();
    } catch (err) {
      this.log.warn({ err, path: this.settings.path }, 'access log: cannot reopen');
    }
  }

  /** Resolves once every line written so far reached the file, or after `timeoutMs` (then writes what is left at once). */
  async flush(timeoutMs: number): Promise<void> {
    this.handAll();
    if (!this.idle) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.out.off('drain', done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.out.on('drain', done);
      });
    }
    this.flushSync(timeoutMs);
  }

  /**
   * Writes what is left synchronously, giving up on a full pipe after `timeoutMs` (the process
   * is exiting). SonicBoom's own flushSync leaves out a write already handed to the thread
   * pool, so lines gathered since are written here, after what SonicBoom holds; only while one
   * of its writes is still under way do they queue behind it instead.
   */
  flushSync(timeoutMs: number): void {
    this.formatQueued();
    if (this.idle) return;
    this.giveUpAt = Date.now() + timeoutMs;
    try {
      if (this.writing) this.lines.hand();
      this.out.flushSync();
    } catch {
      return; // not open yet, or the pipe stayed full: those lines are lost
    }
    const rest = this.lines.take();
    try {
      if (rest !== null) writeWhole(this.bytesOut.fd, rest, this.giveUpAt);
    } catch (err) {
      this.failed(err as Error);
    }
    this.idle = true;
  }

  private warn(err?: Error): void {
    const now = Date.now();
    if (now - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = now;
    this.log.warn({ err, path: this.settings.path ?? 'stdout', writeErrors: this.failures, droppedLines: this.dropped }, 'access log: lines cannot be written');
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** All of `bytes` to `fd` synchronously; a full pipe (EAGAIN) is waited on in 10 ms steps until `giveUpAt`. */
function writeWhole(fd: number, bytes: Buffer, giveUpAt: number): void {
  for (let at = 0; at < bytes.length; ) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'EAGAIN' && code !== 'EBUSY') || Date.now() >= giveUpAt) throw err;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}
