import type { ClientCertificate, StepRequest } from './step.js';
import { ParsedOnDemand } from '../shared/parsed-on-demand.js';

/** A request no socket stands behind (explain's dry run, switchyard/testing): what it is made of. */
export interface SyntheticParts {
  method: string;
  path: string;
  query: string | null;
  /** Flat `name, value, …`, names lower case, in order. */
  headers: string[];
  /** The client (and the socket peer): '' when not given. */
  client: string;
  scheme: 'http' | 'https';
  /** A verified client certificate; absent: none. */
  clientCert?: ClientCertificate | null;
}

/**
 * A StepRequest as a worker builds one, from given parts: the same parsers (query pairs,
 * cookies), read once when a step first asks; every header value as sent; a request id a
 * step may set.
 */
export function syntheticRequest(p: SyntheticParts): StepRequest {
  const flat = p.headers;
  const parsed = new ParsedOnDemand(p.query, flat);
  const all = (name: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i < flat.length; i += 2) if (flat[i] === name) out.push(flat[i + 1]!);
    return out;
  };
  let requestId = '';
  let requestIdHeader: string | null = null;
  return {
    method: p.method,
    path: p.path,
    query: p.query,
    get queryPairs() {
      return parsed.queryPairs;
    },
    cookie: (name) => parsed.cookie(name),
    headers: flat,
    remoteAddress: p.client,
    clientAddress: p.client,
    clientAddressTrusting: () => p.client,
    localPort: '',
    scheme: p.scheme,
    clientCert: p.clientCert ?? null,
    header: (name) => all(name)[0],
    headerList: (name) => (all(name).length ? all(name).join(', ') : undefined),
    get requestId() {
      return requestId;
    },
    get requestIdHeader() {
      return requestIdHeader;
    },
    setRequestId(header, id) {
      requestIdHeader = header;
      requestId = id;
    },
  };
}
