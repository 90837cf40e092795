import { bodylessHead, headBlock, statusLine } from './response-head.js';
import { ExchangeRequest } from './exchange-request.js';

/**
 * A response's head: held until the first body bytes so both go out in one cork, with
 * the exchange's request id echoed in place of any other copy of its header.
 */
export abstract class ExchangeHead extends ExchangeRequest {
  protected headFlushed = false;
  /** Status line and headers waiting to go out with the first body bytes (one send, not two). */
  protected pendingHead: { line: string; headers: [string, string][] } | null = null;
  /** The status the client was sent (0 until a head went out). */
  status = 0;

  /** The head reached the socket: from here on only cutting the connection can signal a failure. */
  get headersSent(): boolean {
    return this.headFlushed;
  }

  /**
   * Status and headers of a streamed response; the body follows through write/end.
   * uWS terminates the head only with the first body write, so the head is held and
   * written in the same cork as that write: one send instead of two.
   */
  writeHead(status: number, statusText: string | undefined, headers: [string, string][]): void {
    if (this.aborted || this.done) return;
    this.status = status;
    this.pendingHead = { line: statusLine(status, statusText), headers: this.idEcho === '' ? headers : this.withoutId(headers) };
  }

  /** `headers` without an upstream's or a step's copy of the request id's header: the exchange appends its own. */
  protected withoutId(headers: [string, string][]): [string, string][] {
    const name = this.requestIdHeader;
    for (let i = 0; i < headers.length; i++) if (headers[i]![0] === name) return headers.filter(([k]) => k !== name);
    return headers;
  }

  /** The held head, taken: it goes out in the same cork as the first body bytes. */
  protected takeHead(): string | null {
    const h = this.pendingHead;
    if (h === null) return null;
    this.pendingHead = null;
    this.headFlushed = true;
    return headBlock(h.line, h.headers) + this.idEcho;
  }

  /** Inside a cork: the held head, if any. */
  protected flushHead(): void {
    const head = this.takeHead();
    if (head !== null) this.res.writeStatus(head);
  }

  /** The head (with the length, if known) and the end, no body: see bodylessHead for why this way. */
  protected endBodyless(head: string | null, contentLength: number | undefined, close: boolean): void {
    this.res.cork(() => {
      if (head !== null) this.res.writeStatus(bodylessHead(head, contentLength, close));
      this.res.endWithoutBody(); // never with arguments: see bodylessHead
    });
  }
}
