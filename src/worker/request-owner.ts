import type { StepHookError } from './step-hook-error.js';
import type { Dispatcher } from 'undici';
import type { ErrorCode } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { CollectedAnswer } from '../steps/step.js';
import type { ExchangeEnd } from './exchange-end.js';
import type { RequestFlow } from './flow.js';
import type { DataMetrics } from './observe/data-metrics.js';

/** What every request of a generation shares. */
export interface LifeEnv {
  traceId: () => string;
  log: Pick<Logger, 'warn'>;
  /** The worker's counters (null: worker.json `metrics.enabled` false). */
  metrics: DataMetrics | null;
  /** The request id's header (null: ids off). */
  requestIdHeader: string | null;
}

/**
 * A request's owner as the code it hands the request to sees it: the proxy stage
 * (request-buffer.ts, proxy.ts), each attempt's handlers (forwarding.ts and the handlers
 * it chains) and the WebSocket handshake. The Exchange implements it; they import this,
 * never the class, which leads to them (phases 4-6), so no import cycle ties them.
 */
export interface RequestOwner extends ExchangeEnd {
  /** The steps' view of the request; null on routes without steps. */
  readonly flow: RequestFlow | null;
  readonly env: LifeEnv;
  /** Nothing of ours runs for this request any more. */
  readonly finished: boolean;
  /** Neither answered nor left: an answer can still be written. */
  readonly answerable: boolean;
  /** The id an error envelope carries. */
  traceId(): string;
  /** Answers with the error envelope (unless the client left or was answered), then finishes. */
  replyError(code: ErrorCode, traceId?: string): void;
  /** Answers with a whole response, then finishes. */
  reply(status: number, body: string | Buffer, headers: [string, string][]): void;
  /** The request's work ended. Idempotent. */
  finish(): void;
  /** Phase 5: the handler one attempt's answer goes to (a fresh one per attempt). */
  upstreamResponse(): Dispatcher.DispatchHandler;
  /** Phase 6: the collectors and the response hooks over a whole answer, which then goes out. */
  responseSteps(answer: CollectedAnswer): void;
  /** A step's response hook threw on the upstream's head: logged and counted as that step's failure. */
  stepHookFailed(err: StepHookError): void;
}
