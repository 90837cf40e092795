import type { OpHandler } from '../op-context.js';
import type { Services } from '../../supervisor/services.js';
import * as sys from './sys.js';

/** Operation id (contract.ts) -> handler. The admin server refuses to start if one is missing. */
export const HANDLERS: Record<string, OpHandler<Services>> = {
  health: sys.health,
  openapi: sys.openapi,
  whoami: sys.whoami,
  'cluster.status': sys.clusterStatus,
};
