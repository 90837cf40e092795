import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';
import type { StepRequest } from '../steps/step.js';
import type { EditPlan } from './header-edits.js';

/**
 * The client's headers as the upstream receives them, in one pass: hop-by-hop ones
 * dropped (also those named in Connection), X-Forwarded-* set, and the steps' header
 * edits applied (`plan`: names whose values are replaced, then the values to append).
 */
export function upstreamHeaders(ex: StepRequest, plan: EditPlan | null): string[] {
  const listed = connectionListed(ex.headerList('connection'));
  const drop = plan === null || plan.drop.length === 0 ? null : plan.drop;
  const h = ex.headers;
  const out: string[] = [];
  let xff: string | undefined;
  let host = '';
  for (let i = 0; i < h.length; i += 2) {
    const k = h[i]!;
    const v = h[i + 1]!;
    if (HOP_BY_HOP.has(k) || (listed && listed.has(k))) continue;
    if (k === 'x-forwarded-for') {
      xff = xff ? `${xff}, ${v}` : v;
      continue;
    }
    if (k === 'x-forwarded-proto' || k === 'x-forwarded-host') continue; // set by us, never trusted from the client
    if (k === 'expect') continue; // 100-continue is answered on the client side; undici refuses the header
    if (k === 'host') host = v;
    if (drop !== null && drop.includes(k)) continue;
    out.push(k, v);
  }
  if (drop === null || !drop.includes('x-forwarded-for')) out.push('x-forwarded-for', xff ? `${xff}, ${ex.remoteAddress}` : ex.remoteAddress);
  if (drop === null || !drop.includes('x-forwarded-proto')) out.push('x-forwarded-proto', 'http');
  if (host && (drop === null || !drop.includes('x-forwarded-host'))) out.push('x-forwarded-host', host);
  if (plan !== null) for (let i = 0; i < plan.tail.length; i++) out.push(plan.tail[i]!);
  return out;
}
