import { responseHeaders } from './upstream-head.js';
import type { RequestOwner } from './request-owner.js';
import type { RelayHandler } from './relay-handler.js';
import { HandlerWrapper } from './handler-wrapper.js';
import { isBodylessStatus } from './response-head.js';

/**
 * Wraps an attempt's relay on a route with whole-answer collectors (cache, compression):
 * an answer whose declared length is within the collectors' largest limit is gathered
 * whole, run through them (responseSteps) and sent in one piece; any other answer (no
 * length, too large, bodiless) is relayed untouched.
 */
export class CollectHandler extends HandlerWrapper<RelayHandler> {
  /** The answer being gathered; null: the relay has it. */
  private gathering: { status: number; headers: [string, string][]; chunks: Buffer[] } | null = null;

  constructor(
    private readonly life: RequestOwner,
    relay: RelayHandler,
  ) {
    super(relay);
  }

  override onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    const head = responseHeaders(raw);
    const limit = this.life.flow!.collectLimit;
    const bodyless = this.life.method === 'HEAD' || isBodylessStatus(statusCode);
    if (head.foreignCoding || bodyless || head.length === null || head.length > limit) return this.inner.relayHead(statusCode, head, resume, statusMessage);
    this.gathering = { status: statusCode, headers: head.headers, chunks: [] };
    return true;
  }

  override onData(chunk: Buffer): boolean {
    if (this.gathering === null) return super.onData(chunk);
    if (!this.life.aborted) this.gathering.chunks.push(chunk); // bounded by collectLimit
    return true;
  }

  override onComplete(trailers: string[] | null): void {
    const g = this.gathering;
    if (g === null) return super.onComplete(trailers);
    this.life.responseSteps({ status: g.status, headers: g.headers, body: Buffer.concat(g.chunks) });
  }
}
