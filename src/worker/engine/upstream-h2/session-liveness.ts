import type { ClientHttp2Session } from 'node:http2';
import { errors } from 'undici';

/** The target stopped answering PINGs: its connection is taken for dead. */
export class SessionSilentError extends errors.SocketError {
  constructor(ms: number) {
    super(`the upstream answered no HTTP/2 PING within ${ms} ms: connection closed`);
  }
}

/**
 * PINGs a session while it carries streams, so a target gone silent (a frozen process, a
 * black-holed route: no FIN, no RST) is found out: a PING unanswered within `answerMs`
 * destroys the session and its streams fail as on a reset connection. It matters most for
 * gRPC, whose calls wait on no headers or body timeout (a long call, a quiet stream).
 * Idle sessions are not PINGed: they close on their own (the pool's idle time).
 */
export class SessionLiveness {
  private timer: NodeJS.Timeout | null = null;
  private watching = false;

  constructor(
    private readonly session: ClientHttp2Session,
    private readonly everyMs: number,
    private readonly answerMs: number,
  ) {}

  /** Streams are open: PING every `everyMs`. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.schedule();
  }

  /** No stream is open (or the session is gone): no more PINGs. */
  stop(): void {
    this.watching = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.ping(), this.everyMs);
    this.timer.unref();
  }

  private ping(): void {
    this.timer = null;
    const session = this.session;
    if (!this.watching || session.destroyed || session.closed) return;
    const silent = setTimeout(() => session.destroy(new SessionSilentError(this.answerMs)), this.answerMs);
    silent.unref();
    const sent = session.ping((err) => {
      clearTimeout(silent);
      if (err === null && this.watching) this.schedule();
    });
    if (!sent) clearTimeout(silent); // too many PINGs unanswered already: node:http2 refused this one
  }
}
