import type { EngineFactory, EngineName } from './contract.js';

/**
 * The engine factory by name, imported only when chosen: where uWebSockets.js has no build
 * for this runtime, the node engine runs without ever loading it.
 */
export async function loadEngine(name: EngineName): Promise<EngineFactory> {
  if (name === 'node') return (await import('./node/node-engine.js')).createNodeEngine;
  return (await import('./uws/uws-engine.js')).createUwsEngine;
}
