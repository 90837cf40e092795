import type { Flow } from '../../steps/step.js';
import { syntheticRequest } from '../../steps/synthetic-request.js';

/** The request explain simulates, as a step would see it. `clientAddress` null: not given. */
export interface DryRequest {
  method: string;
  path: string;
  query: string | null;
  /** Lower-case names. */
  headers: Record<string, string>;
  clientAddress: string | null;
}

/**
 * A Flow no socket stands behind: steps run on it exactly as in a worker, and what they
 * would change (path, query, headers upstream) is kept to be shown. Nothing it offers
 * sends anything: a body cannot be read, and response hooks are only counted.
 */
export function dryFlow(r: DryRequest): Flow {
  const flat = Object.entries(r.headers).flat();
  const upstream = new Map<string, string[]>(Object.entries(r.headers).map(([k, v]) => [k, [v]]));
  // Read as a worker reads them: the same parsers, once, when a step first asks.
  const req = syntheticRequest({ method: r.method, path: r.path, query: r.query, headers: flat, client: r.clientAddress ?? '', scheme: 'http' });
  const flow: Flow = {
    req,
    answeredBy: null,
    path: r.path,
    query: r.query,
    setHeader: (name, value) => void upstream.set(name.toLowerCase(), [value]),
    addHeader: (name, value) => void upstream.set(name.toLowerCase(), [...(upstream.get(name.toLowerCase()) ?? []), value]),
    removeHeader: (name) => void upstream.delete(name.toLowerCase()),
    onResponse() {},
    addResponseHeader() {},
    vars: {},
    limitBody() {},
    readBody: () => Promise.reject(new Error('explain sends no body')),
    cluster: null,
    collectResponse() {},
    retry: null,
    timeouts: null,
    onDone() {},
    preview: () => ({ method: r.method, path: flow.path, query: flow.query, headers: [...upstream].flatMap(([k, vs]) => vs.map((v) => [k, v] as [string, string])) }),
    traceCall: () => null,
  };
  return flow;
}
