/**
 * worker.json `limits.sendTimeoutMs`: how long a response write held by backpressure may
 * wait without the client taking a byte of it. uWS's idle timer does not cover that wait:
 * while a writable callback is registered uWS hangs the socket's timeout, so a download
 * left unread stayed open (25 s with `idleTimeoutS` 5) and kept its request, its
 * concurrency slot and its upstream. One per Exchange, made on the first held write: an
 * answer the socket takes at once costs no timer.
 */
export class SendStall {
  private timer: NodeJS.Timeout | null = null;
  /** uWS's write offset when the client last took bytes (-1: not held). */
  private offset = -1;

  constructor(
    private readonly ms: number,
    /** The wait ran out: the owner closes the connection. */
    private readonly expired: () => void,
  ) {}

  /**
   * A write is held at uWS's write `offset`: the wait starts, or starts again if the
   * client took bytes since (the offset moved). A writable event that moved nothing
   * (uWS may call one spuriously) does not renew it.
   */
  held(offset: number): void {
    if (offset === this.offset) return;
    this.offset = offset;
    if (this.timer === null) {
      this.timer = setTimeout(this.expired, this.ms);
      this.timer.unref(); // uWS's sockets keep the worker alive, not this timer
    } else this.timer.refresh();
  }

  /** Nothing waits for the client any more (the held write went out, or the exchange ended). */
  clear(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.offset = -1;
  }
}
