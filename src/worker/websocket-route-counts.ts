/**
 * Open WebSockets (and handshakes under way) per route id, in one worker, across
 * generations: a route's `websocket.maxConnections` counts them. Held by the worker's
 * context, so a publish does not reset the count.
 */
export class WebSocketRouteCounts {
  private readonly open = new Map<string, number>();

  count(routeId: string): number {
    return this.open.get(routeId) ?? 0;
  }

  add(routeId: string): void {
    this.open.set(routeId, this.count(routeId) + 1);
  }

  remove(routeId: string): void {
    const n = (this.open.get(routeId) ?? 1) - 1;
    if (n === 0) this.open.delete(routeId);
    else this.open.set(routeId, n);
  }
}
