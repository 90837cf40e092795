import type { ErrorCode } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { envelopeReply } from './envelope.js';
import type { Exchange, ExchangeOwner } from './exchange.js';
import type { RequestFlow } from './flow.js';
import type { DataMetrics } from './observe/data-metrics.js';
import type { RequestTrace } from './observe/request-trace.js';

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
 * The requests a generation still serves: its pools close once it is retired and the
 * last one ended. Counted by RequestLife alone (its constructor and its finish).
 */
export class GenerationRequests {
  private live = 0;
  private retired = false;
  private drained: (() => void) | undefined;

  constructor(private readonly closePools: () => void) {}

  /** Requests started and not yet ended. */
  get inFlight(): number {
    return this.live;
  }

  started(): void {
    this.live++;
  }

  ended(): void {
    if (--this.live === 0 && this.retired) this.close();
  }

  /** `drained`: told once the last request ended (at once when none is in flight). */
  retire(drained?: () => void): void {
    this.retired = true;
    this.drained = drained;
    if (this.live === 0) this.close();
  }

  private close(): void {
    this.closePools();
    this.drained?.();
  }
}

/**
 * The owner of one request handed to a route's terminal (an Exchange): it alone knows
 * that the request's work finished, holds the generation's count for it, runs the flow's
 * done hooks and ends the trace, and answers the client on behalf of the runtime and the
 * proxy stage. The final status is the Exchange's (`finalStatus`, decided when it ends):
 * the done hooks run then, the trace once both the exchange and the work ended.
 */
export class RequestLife implements ExchangeOwner {
  /** Nothing of ours runs for this request any more; set once, by finish(). */
  finished = false;

  constructor(
    readonly ex: Exchange,
    /** The steps' view of the request; null on routes without steps. */
    readonly flow: RequestFlow | null,
    private readonly requests: GenerationRequests,
    readonly env: LifeEnv,
    /** The request's W3C trace (observe/), ended with it; the exchange and the flow reach it too. */
    trace: RequestTrace | null = null,
  ) {
    requests.started();
    ex.owner = this;
    ex.trace = trace;
    if (flow !== null) flow.trace = trace;
  }

  /** Neither answered nor left: an answer can still be written. */
  get answerable(): boolean {
    return !this.ex.aborted && !this.ex.done;
  }

  /**
   * The exchange ended with its final status (answered, cut, or the client left): the done
   * hooks run now, also while a step still works for a client that left (a concurrency
   * slot, a breaker's count must not wait for a slow step).
   */
  exchangeEnded(): void {
    this.flow?.ended(this.ex.finalStatus);
    if (this.finished) this.endTrace();
  }

  /** The request's work ended (answered, failed, or given up on a client that left): the generation's count. Idempotent. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.ex.ended) this.endTrace();
    this.requests.ended();
  }

  /** After its calls out ended (the upstream's answer completes before its last bytes reach the client). */
  private endTrace(): void {
    this.ex.trace?.end(this.ex.finalStatus, this.ex.requestId);
  }

  /** The id an error envelope carries: the request's id, or a trace id made for it. */
  traceId(): string {
    return this.ex.requestId || this.env.traceId();
  }

  /** Answers with the error envelope (unless the client left or was answered), then finishes. */
  replyError(code: ErrorCode, traceId?: string): void {
    if (this.answerable) {
      this.ex.sendStatic(envelopeReply(code, traceId ?? this.traceId()));
    }
    this.finish();
  }

  /** Answers with a whole response (a step's reply, a collected answer), then finishes. */
  reply(status: number, body: string | Buffer, headers: [string, string][]): void {
    this.ex.sendHead(status, body, headers);
    this.finish();
  }
}
