import type { Dispatcher } from 'undici';
import { responseHeaders } from './upstream-head.js';
import type { RequestLife } from './request-life.js';
import type { RelayHandler } from './relay-handler.js';
import { responseSteps } from './phases.js';

/**
 * Wraps an attempt's relay on a route with whole-answer collectors (cache, compression):
 * an answer whose declared length is within the collectors' largest limit is gathered
 * whole, run through them (responseSteps) and sent in one piece; any other answer (no
 * length, too large, bodiless) is relayed untouched.
 */
export class CollectHandler implements Dispatcher.DispatchHandler {
  /** The answer being gathered; null: the relay has it. */
  private gathering: { status: number; headers: [string, string][]; chunks: Buffer[] } | null = null;

  constructor(
    private readonly life: RequestLife,
    private readonly relay: RelayHandler,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.relay.onConnect(abort);
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    const head = responseHeaders(raw);
    const limit = this.life.flow!.collectLimit;
    const bodyless = this.life.ex.method === 'HEAD' || statusCode === 204 || statusCode === 304;
    if (head.foreignCoding || bodyless || head.length === null || head.length > limit) return this.relay.relayHead(statusCode, head, resume, statusMessage);
    this.life.status = statusCode;
    this.gathering = { status: statusCode, headers: head.headers, chunks: [] };
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.gathering === null) return this.relay.onData(chunk);
    if (!this.life.ex.aborted) this.gathering.chunks.push(chunk); // bounded by collectLimit
    return true;
  }

  onComplete(): void {
    const g = this.gathering;
    if (g === null) return this.relay.onComplete();
    responseSteps(this.life, { status: g.status, headers: g.headers, body: Buffer.concat(g.chunks) });
  }

  onError(err: Error): void {
    this.relay.onError(err);
  }
}
