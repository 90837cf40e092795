import type { Dispatcher } from 'undici';
import type { RequestLife } from './request-life.js';
import { RelayHandler } from './relay-handler.js';
import { CollectHandler } from './collect-handler.js';

/** Phases 5-6 (phases.ts): the handler an attempt's answer goes to: relayed, or gathered first for the collectors. */
export function upstreamResponse(life: RequestLife): Dispatcher.DispatchHandler {
  const relay = new RelayHandler(life);
  return life.flow?.collectors ? new CollectHandler(life, relay) : relay;
}
