import type { ResponseHead } from './engine/contract.js';
import { ExchangeRequest } from './exchange-request.js';

/**
 * A response's head: held until the first body bytes so both go out together, with
 * the exchange's request id echoed in place of any other copy of its header.
 */
export abstract class ExchangeHead extends ExchangeRequest {
  protected headFlushed = false;
  /** Status and headers waiting to go out with the first body bytes (one send, not two). */
  protected pendingHead: ResponseHead | null = null;
  /** The status the client was sent (0 until a head went out). */
  status = 0;

  /** The head reached the engine: from here on only cutting the connection can signal a failure. */
  get headersSent(): boolean {
    return this.headFlushed;
  }

  /**
   * Status and headers of a streamed response; the body follows through write/end.
   * The head is held and handed to the engine with the first body write: one send.
   */
  writeHead(status: number, statusText: string | undefined, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.status = status;
    this.pendingHead = { status, reason: statusText ?? '', headers: this.idEcho === null ? headers : this.withoutId(headers) };
  }

  /** `headers` without an upstream's or a step's copy of the request id's header: the exchange appends its own. */
  protected withoutId(headers: [string, string][]): [string, string][] {
    const name = this.requestIdHeader;
    for (let i = 0; i < headers.length; i++) if (headers[i]![0] === name) return headers.filter(([k]) => k !== name);
    return headers;
  }

  /** The held head, taken: it goes to the engine with the first body bytes. */
  protected takeHead(): ResponseHead | null {
    const h = this.pendingHead;
    if (h === null) return null;
    this.pendingHead = null;
    this.headFlushed = true;
    return h;
  }
}
