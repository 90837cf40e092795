import type { Dispatcher } from 'undici';

type NewStyle = Required<Pick<Dispatcher.DispatchHandler, 'onRequestStart' | 'onResponseStart' | 'onResponseData' | 'onResponseEnd' | 'onResponseError'>>;

/**
 * A handler of undici's newer interface (onRequestStart, onResponse*: `mirror`'s copies)
 * seen through the callbacks the HTTP/2 calls make, as undici's client adapts one
 * (its UnwrapHandler, not exported). The proxy's handlers use the callbacks directly.
 */
export function legacyHandler(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
  return typeof handler.onRequestStart === 'function' ? new NewStyleHandler(handler as Dispatcher.DispatchHandler & NewStyle) : handler;
}

class NewStyleHandler implements Dispatcher.DispatchHandler {
  private abortRequest: (err?: Error) => void = () => {};
  private resumeResponse: () => void = () => {};
  private readonly controller = {
    paused: false,
    aborted: false,
    reason: null as Error | null,
    abort: (reason?: Error) => {
      if (this.controller.aborted) return;
      this.controller.aborted = true;
      this.controller.reason = reason ?? null;
      this.abortRequest(reason);
    },
    pause: () => void (this.controller.paused = true),
    resume: () => {
      if (!this.controller.paused) return;
      this.controller.paused = false;
      this.resumeResponse();
    },
  };

  constructor(private readonly inner: Dispatcher.DispatchHandler & NewStyle) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    this.inner.onRequestStart(this.controller as unknown as Dispatcher.DispatchController, {});
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    this.resumeResponse = resume;
    this.inner.onResponseStart(this.controller as unknown as Dispatcher.DispatchController, statusCode, headerRecord(raw), statusMessage);
    return !this.controller.paused;
  }

  onData(chunk: Buffer): boolean {
    this.inner.onResponseData(this.controller as unknown as Dispatcher.DispatchController, chunk);
    return !this.controller.paused;
  }

  onComplete(trailers: string[] | null): void {
    this.inner.onResponseEnd(this.controller as unknown as Dispatcher.DispatchController, headerRecord(trailers ?? []));
  }

  onError(err: Error): void {
    this.inner.onResponseError(this.controller as unknown as Dispatcher.DispatchController, err);
  }
}

/** Flat `name, value, …` pairs as a record, repeated names as a list. */
function headerRecord(pairs: readonly (Buffer | string)[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i]!.toString().toLowerCase();
    const value = pairs[i + 1]!.toString();
    const have = out[name];
    out[name] = have === undefined ? value : Array.isArray(have) ? [...have, value] : [have, value];
  }
  return out;
}
