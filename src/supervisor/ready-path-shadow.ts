import type { CompiledGeneration } from '../contracts/generation.js';

/**
 * The routes (`tenant/name`) whose path prefix would take worker.json `readiness.dataPath`,
 * which the data port answers before routing. A catch-all prefix ('' or '/') is left out:
 * it covers every path, and losing the one the operator chose is expected; a longer prefix
 * that covers it is likely a surprise.
 */
export function shadowedReadyPath(gen: CompiledGeneration, path: string): string[] {
  const lower = path.toLowerCase();
  const out: string[] = [];
  for (const { routes } of Object.values(gen.tenants)) {
    for (const r of routes) {
      if (r.pathPrefix.length <= 1) continue;
      const covers = r.caseSensitive ? path.startsWith(r.pathPrefix) : lower.startsWith(r.pathPrefix.toLowerCase());
      if (covers) out.push(`${r.tenant}/${r.name}`);
    }
  }
  return out;
}
