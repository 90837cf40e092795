import type { Dispatcher } from 'undici';

/**
 * A handler that passes undici's callbacks on to the one it wraps, as undici's
 * DecoratorHandler does, but on the callbacks undici 7 calls without an adapter
 * (relay-handler.ts says why). A wrapper overrides only the callbacks it acts on.
 */
export class HandlerWrapper<H extends Dispatcher.DispatchHandler = Dispatcher.DispatchHandler> implements Dispatcher.DispatchHandler {
  constructor(protected inner: H) {}

  onConnect(abort: (err?: Error) => void): void {
    this.inner.onConnect!(abort);
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    return this.inner.onHeaders!(statusCode, raw, resume, statusMessage);
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData!(chunk);
  }

  onComplete(trailers: string[] | null): void {
    this.inner.onComplete!(trailers);
  }

  onError(err: Error): void {
    this.inner.onError!(err);
  }
}
