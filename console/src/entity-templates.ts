import type { Kind } from './api';

/**
 * The document the editor offers for a new entity of each kind. test/orch-node-never-runs.test.ts
 * compiles them, so what the console suggests is never warned about.
 */
export const TEMPLATE: Record<Kind, Record<string, unknown>> = {
  cluster: { targets: ['127.0.0.1:3000'] },
  route: { cluster: 'api', pathPrefix: '/api' },
  orch: { nodes: [{ id: 'rate', step: 'rate-limit', settings: { requestsPerSecond: 10, burst: 20 } }], links: [] },
};
