import type { WebSocketRelay } from './websocket-relay.js';

/** How often the idle timers are checked: a route's idleTimeoutMs is kept to within this. */
const IDLE_SWEEP_MS = 1_000;

/**
 * The worker's open proxied WebSockets, whatever engine holds their client side: the set a
 * drain closes and waits for, and the sweep that applies each route's idle timer.
 */
export class OpenWebSockets {
  private readonly open = new Set<WebSocketRelay>();
  private sweep: NodeJS.Timeout | null = null;
  /** Called when the last open WebSocket closed (a drain waits for it). */
  onEmpty: (() => void) | null = null;

  get size(): number {
    return this.open.size;
  }

  opened(relay: WebSocketRelay): void {
    this.open.add(relay);
    this.sweep ??= setInterval(() => this.closeIdle(), IDLE_SWEEP_MS).unref();
  }

  closed(relay: WebSocketRelay): void {
    if (!this.open.delete(relay) || this.open.size > 0) return;
    if (this.sweep) clearInterval(this.sweep);
    this.sweep = null;
    this.onEmpty?.();
  }

  /** Ends every open WebSocket with `code` on both sides (a drain's end: 1001). */
  closeAll(code: number, reason: string): void {
    for (const relay of [...this.open]) relay.closeBoth(code, reason);
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const relay of [...this.open]) if (now - relay.lastActivity > relay.settings.idleTimeoutMs) relay.closeBoth(1001, 'idle timeout');
  }
}
