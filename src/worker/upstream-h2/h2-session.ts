import type { ClientHttp2Session, Settings } from 'node:http2';
import { errors, type Dispatcher } from 'undici';
import { ASSUMED_MAX_STREAMS } from '../../shared/upstream-h2-session.js';
import { H2Call, type CallPlace } from './h2-call.js';
import { closedUnder } from './h2-errors.js';

/** What a session tells its pool. */
export interface SessionOwner {
  /** A stream slot freed up, the peer allowed more streams, or the session stopped taking new ones: waiting requests may go. */
  roomMade(): void;
  /** The session is gone: closed, or never connected (`connectError`). */
  ended(session: H2Session, connectError: Error | null): void;
  /** A request the session took while it connected, beyond what the peer's SETTINGS then allowed: it goes elsewhere. */
  handBack(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
}

interface Held {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
}

type Opener = (done: (err: Error | null, session: ClientHttp2Session | null) => void) => void;

/**
 * One HTTP/2 connection of a target's pool and the streams on it: at most the peer's
 * SETTINGS_MAX_CONCURRENT_STREAMS at once. Until the peer's first SETTINGS it takes up to
 * ASSUMED_MAX_STREAMS requests and holds them; then it starts as many as the peer allows
 * and hands the rest back to the pool (a stream past the limit would be refused), or,
 * when the connection fails (or no SETTINGS come within `settingsMs`), fails them with the
 * connect error, nothing sent. A GOAWAY, the pool's close or `idleMs` without a stream
 * makes it `draining`: no new stream, the open ones finish, then it closes.
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
  private settingsTimer: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  private drainWhenReady = false;
  private connectError: Error | null = null;
  /** Resolves once the session is gone. */
  readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(
    private readonly owner: SessionOwner,
    private readonly place: CallPlace,
    private readonly idleMs: number,
    /** How long the peer's first SETTINGS may take once connected (the cluster's connect timeout). */
    private readonly settingsMs: number,
  ) {
    this.gone = new Promise((resolve) => (this.markGone = resolve));
  }

  /** A new stream may go on it now. */
  get hasRoom(): boolean {
    return (this.state === 'connecting' || this.state === 'ready') && this.active < this.capacity;
  }

  /** It counts against the pool's connections: it still takes new streams (a draining one is on its way out). */
  get taking(): boolean {
    return this.state === 'connecting' || this.state === 'ready';
  }

  get streams(): number {
    return this.active;
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
    const call = new H2Call(opts, handler, this.callDone);
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
    // A session's own errors reach its streams as theirs; 'close' follows.
    session.on('error', () => {});
    session.on('remoteSettings', (s: Settings) => {
      this.capacity = s.maxConcurrentStreams ?? this.capacity;
      if (this.state === 'connecting') this.settled();
      this.owner.roomMade();
    });
    // node:http2 closes the session on a GOAWAY (NO_ERROR: the open streams finish; else at once).
    session.on('goaway', () => this.drain());
    session.once('close', () => this.closed());
    this.settingsTimer = setTimeout(() => {
      this.failed(new errors.ConnectTimeoutError(`no HTTP/2 SETTINGS from the upstream within ${this.settingsMs} ms`));
      session.destroy();
    }, this.settingsMs);
  }

  /** The peer's first SETTINGS came: the held requests start, as many as it allows; the rest go back to the pool. */
  private settled(): void {
    if (this.settingsTimer !== null) clearTimeout(this.settingsTimer);
    this.settingsTimer = null;
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
    if (this.settingsTimer !== null) clearTimeout(this.settingsTimer);
    const held = this.held;
    this.held = [];
    this.owner.ended(this, err);
    this.markGone();
    for (const h of held) new H2Call(h.opts, h.handler, this.callDone).refuse(err);
  }

  private closed(): void {
    if (this.settingsTimer !== null) clearTimeout(this.settingsTimer);
    if (this.state === 'connecting') return this.failed(closedUnder()); // closed before its SETTINGS
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearIdle();
    this.owner.ended(this, null);
    this.markGone();
  }

  private readonly callDone = (): void => {
    this.active--;
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
