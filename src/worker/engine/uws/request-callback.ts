// When a response that closes the connection may be written (a uWS rule; see UwsDownstream.reply).

/**
 * Set by the engine from uWS's first request callback of a loop turn until the next turn:
 * while uWS parses a packet, the microtasks between its callbacks run too (a group's
 * reply), so a response that closes the connection waits for the next turn, when uWS is
 * done with the bytes it holds. One per engine.
 */
export class RequestCallback {
  active = false;
  private scheduled = false;
  private readonly settle = (): void => {
    this.active = false;
    this.scheduled = false;
  };

  enter(): void {
    this.active = true;
  }

  leave(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.settle);
  }
}
