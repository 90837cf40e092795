// When a response that closes the connection may be written (a uWS rule; see Exchange.sendBlock).

/**
 * Set by the data server from uWS's first request callback of a loop turn until the next
 * turn (see sendBlock): while uWS parses a packet, the microtasks between its callbacks
 * run too (a group's reply), so a response that closes the connection waits for the next
 * turn, when uWS is done with the bytes it holds.
 */
export const requestCallback = {
  active: false,
  scheduled: false,
  enter(): void {
    this.active = true;
  },
  leave(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.active = false;
      this.scheduled = false;
    });
  },
};
