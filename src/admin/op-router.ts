import type { Operation } from './contract.js';

export type Params = Record<string, string>;

interface CompiledOp {
  op: Operation;
  segments: { literal: string | null; param: string | null }[];
}

export type RouteResult =
  | { kind: 'match'; op: Operation; params: Params }
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

/**
 * Matches a method and path against the contract's path patterns
 * (`/api/v1/{tenant}/config/set/{kind}/{name}`). Literal segments are preferred over
 * parameters, so `/api/v1/sys/...` never reads as tenant `sys`.
 */
export class OpRouter {
  private readonly compiled: CompiledOp[];

  constructor(ops: readonly Operation[]) {
    this.compiled = ops.map((op) => ({
      op,
      segments: op.path
        .split('/')
        .slice(1)
        .map((s) => (s.startsWith('{') ? { literal: null, param: s.slice(1, -1) } : { literal: s, param: null })),
    }));
    // More literal segments first: specific paths win over parameterised ones.
    const literals = (c: CompiledOp) => c.segments.filter((s) => s.literal !== null).length;
    this.compiled.sort((a, b) => literals(b) - literals(a));
  }

  match(method: string, path: string): RouteResult {
    const parts = path.split('/').slice(1);
    const allow: string[] = [];
    for (const c of this.compiled) {
      const params = matchSegments(c, parts);
      if (!params) continue;
      if (c.op.method === method || (method === 'HEAD' && c.op.method === 'GET')) return { kind: 'match', op: c.op, params };
      allow.push(c.op.method);
      if (c.op.method === 'GET') allow.push('HEAD'); // served as GET without the body
    }
    return allow.length ? { kind: 'method', allow } : { kind: 'none' };
  }
}

function matchSegments(c: CompiledOp, parts: string[]): Params | null {
  if (parts.length !== c.segments.length) return null;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = c.segments[i]!;
    const part = parts[i]!;
    if (seg.literal !== null) {
      if (seg.literal !== part) return null;
    } else {
      if (part === '') return null;
      let value: string;
      try {
        value = decodeURIComponent(part);
      } catch {
        return null;
      }
      params[seg.param!] = value;
    }
  }
  return params;
}
