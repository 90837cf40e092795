import type { CompiledRoute } from '../contracts/generation.js';

/** `*.example.com` covers `a.example.com` and `*.a.example.com`; an exact host covers itself. */
export function coversHost(pattern: string, host: string): boolean {
  return pattern === host || (pattern.startsWith('*.') && host.endsWith(pattern.slice(1)));
}

/** Whether a normalised path falls under the route's prefix, in its case rule (as the route table matches it). */
export function prefixMatches(r: Pick<CompiledRoute, 'pathPrefix' | 'caseSensitive'>, path: string): boolean {
  return r.caseSensitive ? path.startsWith(r.pathPrefix) : path.toLowerCase().startsWith(r.pathPrefix.toLowerCase());
}
