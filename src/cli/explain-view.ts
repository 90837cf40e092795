import { printable } from './output/cell.js';
import type { RouteView, StepView, UpstreamView } from '../contracts/explain.js';

/** Under explain's route table: the winner's terminal, its steps with their verdicts, and the upstream. */
export function explainFooter(body: Record<string, unknown>): string | null {
  const route = body.route as RouteView | null;
  if (!route) return null;
  const t = route.terminal;
  const lines = [`route ${printable(route.name)}: ${t.type}${t.cluster ? ` to cluster ${printable(t.cluster)}` : ''}${t.location ? ` ${t.statusCode} to ${printable(t.location)}` : ''}`];
  const steps = t.steps ?? [];
  steps.forEach((s, i) => lines.push(...stepLines(s, `${i + 1}.`, '  ')));
  if (t.type === 'cluster' && steps.length === 0) lines.push('  no steps');
  const up = body.upstream as UpstreamView | null | undefined;
  if (up) {
    lines.push(`upstream: ${printable(up.target ?? '(decided per request)')}: ${printable(up.reason)}`);
    lines.push(`upstream path: ${printable(up.path + (up.query === null ? '' : `?${up.query}`))}`);
  }
  return lines.join('\n');
}

function stepLines(s: StepView, n: string, indent: string): string[] {
  const answer = s.status !== undefined ? ` ${s.status}${s.error ? ` ${s.error}` : ''}` : '';
  const out = [`${indent}${n} ${s.code} (${s.failureStrategy}): ${s.verdict}${answer}: ${printable(s.reason)}`];
  s.group?.members.forEach((m, j) => m.forEach((x, k) => out.push(...stepLines(x, `${j + 1}.${k + 1}`, `${indent}   `))));
  return out;
}
