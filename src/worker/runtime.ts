import type { Logger } from '../shared/logger.js';
import type { Exchange } from './exchange.js';

export interface RuntimeDeps {
  log: Logger;
  traceId: () => string;
}

/** Everything a worker needs to serve one generation, built once when it arrives. */
export interface Runtime {
  readonly generation: number;
  handle(ex: Exchange): void;
  /** Called when a newer generation replaced this one: close pools once idle. */
  retire(): void;
}

export function buildRuntime(generation: number, _payload: unknown, deps: RuntimeDeps): Runtime {
  // Generations arrive with the publish work (issue 3); until then nothing is published.
  throw new Error(`worker cannot build generation ${generation} yet (${deps.log ? 'no compiler' : ''})`);
}
