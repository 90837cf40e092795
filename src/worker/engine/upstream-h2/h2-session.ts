import type { ClientHttp2Session, Settings } from 'node:http2';
import type { Dispatcher } from 'undici';
import { ASSUMED_MAX_STREAMS } from '../../../shared/upstream-h2-session.js';
import { H2Call, type CallPlace } from './h2-call.js';
import { closedUnder } from './h2-errors.js';
import type { SessionOwner } from './session-owner.js';
import { firstSettings } from './first-settings.js';
import { SessionLiveness } from './session-liveness.js';

interface Held {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
}

type Opener = (done: (err: Error | null, session: ClientHttp2Session | null) => void) => void;

/**
 * One HTTP/2 connection of a target's pool, at most the peer's SETTINGS_MAX_CONCURRENT_STREAMS
 * streams at once. Until the peer's first SETTINGS it holds up to ASSUMED_MAX_STREAMS
 * requests; then it starts as many as the peer allows and hands the rest back (a stream
 * past the limit would be refused), or fails them with the connect error, nothing sent
 * (also when no SETTINGS come within `settingsMs`). A GOAWAY, the pool's close or `idleMs`
 * without a stream make it `draining`: no new stream, the open ones finish, then it closes.
 */
export class H2Session {
  private session: ClientHttp2Session | null = null;
  private state: 'connecting' | 'ready' | 'draining' | 'closed' = 'connecting';
  /** Streams in flight, counting those held while it connects. */
  private active = 0;
  private capacity = ASSUMED_MAX_STREAMS;
  /** Streams started so far: a stream after the first goes on a reused connection. */
  private started = 0;
  private held: Held[] = [];
  private idle: NodeJS.Timeout | null = null;
  private drainWhenReady = false;
  private connectError: Error | null = null;
  /** PINGs while streams are open (session-liveness.ts); made when the session is. */
  private liveness: SessionLiveness | null = null;
  /** Resolves once it is gone. */
  readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(
    private readonly owner: SessionOwner,
    private readonly place: CallPlace,
    private readonly idleMs: number,
    /** How long the peer's first SETTINGS may take once connected (the cluster's connect timeout), and a PING's answer. */
    private readonly settingsMs: number,
    /** A PING this often while streams are open. */
    private readonly pingMs: number,
  ) {
    this.gone = new Promise((resolve) => (this.markGone = resolve));
  }

  /** A new stream may go on it now. */
  get hasRoom(): boolean {
    return (this.state === 'connecting' || this.state === 'ready') && this.active < this.capacity;
  }

  /** It counts against the pool's connections (a draining one is on its way out). */
  get taking(): boolean {
    return this.state === 'connecting' || this.state === 'ready';
  }

  get streams(): number {
    return this.active;
  }

  get over(): boolean {
    return this.state === 'closed';
  }

  open(opener: Opener): void {
    opener((err, session) => (err !== null ? this.failed(err) : this.ready(session!)));
  }

  /** Runs a request on this session (the pool checked hasRoom). */
  run(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.active++;
    this.clearIdle();
    if (this.state === 'connecting') this.held.push({ opts, handler });
    else this.begin(opts, handler);
  }

  private begin(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.liveness?.watch();
    const call = new H2Call(opts, handler, this.callDone);
    // No session: it failed to connect synchronously, before the pool could know.
    if (this.session === null) call.refuse(this.connectError ?? closedUnder());
    else call.start(this.session, this.place, this.started++ > 0);
  }

  /** Stops taking streams; the open ones finish, then the connection closes. */
  drain(): void {
    if (this.state === 'connecting') {
      this.drainWhenReady = true;
      return;
    }
    if (this.state !== 'ready') return;
    this.state = 'draining';
    this.clearIdle();
    // Closed once its last stream is over: node:http2's close() would refuse a stream not yet flushed.
    if (this.active === 0) this.session!.close();
    this.owner.roomMade();
  }

  private ready(session: ClientHttp2Session): void {
    this.session = session;
    this.liveness = new SessionLiveness(session, this.pingMs, this.settingsMs);
    // A session's own errors reach its streams as theirs; 'close' follows.
    session.on('error', () => {});
    session.on('remoteSettings', (s: Settings) => {
      this.capacity = s.maxConcurrentStreams ?? this.capacity;
      this.owner.roomMade();
    });
    // node:http2 closes the session on a GOAWAY (NO_ERROR: the open streams finish; else at once).
    session.on('goaway', () => this.drain());
    session.once('close', () => this.closed());
    firstSettings(session, this.settingsMs, (err) => {
      if (err === null) return this.settled();
      this.failed(err);
      session.destroy();
    });
  }

  /** The peer's first SETTINGS came: the held requests start, as many as it allows; the rest go back to the pool. */
  private settled(): void {
    this.state = 'ready';
    const held = this.held;
    this.held = [];
    const room = Math.max(this.capacity, 0);
    const back = held.splice(room);
    this.active -= back.length;
    for (const h of held) this.begin(h.opts, h.handler);
    for (const h of back) this.owner.handBack(h.opts, h.handler);
    if (this.drainWhenReady) this.drain();
    else if (this.active === 0) this.armIdle();
  }

  private failed(err: Error): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.connectError = err;
    const held = this.held;
    this.held = [];
    this.owner.ended(err);
    this.markGone();
    for (const h of held) new H2Call(h.opts, h.handler, this.callDone).refuse(err);
  }

  private closed(): void {
    if (this.state === 'closed' || this.state === 'connecting') return; // before its SETTINGS: firstSettings fails it
    this.state = 'closed';
    this.clearIdle();
    this.liveness?.stop();
    this.owner.ended(null);
    this.markGone();
  }

  private readonly callDone = (): void => {
    this.active--;
    if (this.active === 0) this.liveness?.stop();
    if (this.active === 0 && this.state === 'ready') this.armIdle();
    if (this.active === 0 && this.state === 'draining') this.session!.close();
    this.owner.roomMade();
  };

  private armIdle(): void {
    this.clearIdle();
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.active === 0) this.drain();
    }, this.idleMs);
    this.idle.unref();
  }

  private clearIdle(): void {
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
  }
}
