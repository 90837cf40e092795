import { constants, type SecureServerOptions, type ServerHttp2Session, type ServerHttp2Stream, type ServerOptions } from 'node:http2';
import type { Logger } from '../../../shared/logger.js';
import type { LimitEvents } from '../../limit-events.js';
import type { EngineLimits } from '../contract.js';
import type { ResetCooldown } from './reset-cooldown.js';

/** Invalid frames and refused streams a session may cause before node closes it: a client that keeps doing either is not a browser. */
const MAX_INVALID_FRAMES = 100;
const MAX_REJECTED_STREAMS = 100;
/** After a GOAWAY for rapid resets, the session is destroyed this much later (the GOAWAY gets out first). */
const RESET_GRACE_MS = 1_000;

/** The HTTP/2 settings and bounds of every h2 session (h2c and TLS). */
export function h2Options(limits: EngineLimits): ServerOptions & SecureServerOptions {
  return {
    settings: { maxConcurrentStreams: limits.h2MaxConcurrentStreams, maxHeaderListSize: limits.h2MaxHeaderListBytes },
    peerMaxConcurrentStreams: limits.h2MaxConcurrentStreams,
    maxSessionInvalidFrames: MAX_INVALID_FRAMES,
    maxSessionRejectedStreams: MAX_REJECTED_STREAMS,
    // nghttp2 resets a stream past 128 fields; the list's size (limits.h2MaxHeaderListBytes) is the bound, answered 431 (request-intake.ts).
    maxHeaderListPairs: 4_096,
  };
}

/**
 * Rapid reset (CVE-2023-44487): a client that resets more than limits.h2MaxResetsPerSecond
 * streams in a second, each before its answer finished, gets GOAWAY ENHANCE_YOUR_CALM and
 * the session is destroyed shortly after; its address begins a cooldown (reset-cooldown.ts).
 */
export class ResetGuard {
  private windowStart = 0;
  private count = 0;
  private tripped = false;

  constructor(
    private readonly session: ServerHttp2Session,
    private readonly limit: number,
    private readonly events: LimitEvents,
    private readonly cooldown: ResetCooldown,
  ) {}

  reset(): void {
    const now = Date.now();
    if (now - this.windowStart >= 1_000) {
      this.windowStart = now;
      this.count = 0;
    }
    if (++this.count <= this.limit || this.tripped || this.session.destroyed) return;
    this.tripped = true;
    this.events.hit('h2MaxResetsPerSecond', { resets: this.count, limit: this.limit });
    this.cooldown.begin(this.session.socket?.remoteAddress);
    this.session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    setTimeout(() => this.session.destroy(), RESET_GRACE_MS).unref();
  }
}

/** What every session's watch shares. */
export interface SessionWatch {
  /** Streams the gateway reset itself: no count against the client. */
  ownResets: WeakSet<object>;
  events: LimitEvents;
  cooldown: ResetCooldown;
  log: Logger;
}

/** Watches a new session: idle timeout, errors, the client's stream resets. */
export function watchSession(session: ServerHttp2Session, limits: EngineLimits, watch: SessionWatch): void {
  const { ownResets, log } = watch;
  const guard = new ResetGuard(session, limits.h2MaxResetsPerSecond, watch.events, watch.cooldown);
  session.on('error', (err) => log.debug({ err: err.message }, 'h2 session error'));
  session.setTimeout(limits.idleTimeoutS * 1000, () => session.close());
  session.on('stream', (stream: ServerHttp2Stream) => {
    stream.on('error', () => {});
    // 'aborted': the stream closed before the response's last byte went out.
    stream.once('aborted', () => {
      if (!ownResets.has(stream) && !session.destroyed && !session.closed) guard.reset();
    });
  });
  session.on('frameError', () => guard.reset());
}
