import { HOP_BY_HOP, connectionListed } from '../shared/hop-by-hop.js';
import type { StepRequest } from '../steps/step.js';
import type { EditPlan } from '../shared/header-edits.js';
import type { UpstreamTrace } from './observe/request-trace.js';
import { CONSOLE_COOKIE_PREFIX, withoutConsoleSession } from '../shared/console-session-cookie.js';

const DROP = 0;
const XFF = 1;
const HOST = 2;
const TRACE_PARENT = 3;
const TRACE_STATE = 4;
const COOKIE = 5;

/**
 * Client headers the builder does not pass on as they came, by what it does with them
 * (one lookup per header): hop-by-hop ones and those the gateway sets itself dropped,
 * X-Forwarded-For extended, Host read for X-Forwarded-Host.
 */
const SPECIAL = new Map<string, number>([
  ...[...HOP_BY_HOP].map((k): [string, number] => [k, DROP]),
  ['x-forwarded-proto', DROP],
  ['x-forwarded-host', DROP],
  ['x-forwarded-port', DROP],
  // 100-continue is answered on the client side; undici refuses the header
  ['expect', DROP],
  ['x-forwarded-for', XFF],
  ['host', HOST],
  ['traceparent', TRACE_PARENT],
  ['tracestate', TRACE_STATE],
  ['cookie', COOKIE],
]);

/**
 * The client's headers as the upstream receives them, in one pass: hop-by-hop ones
 * dropped (also those named in Connection), the console's session cookie removed from
 * Cookie, X-Forwarded-For/Proto/Host/Port set, and
 * the steps' header edits applied (`plan`: names whose values are replaced, then the
 * values to append). The request's headers hold an X-Forwarded-For (and the other
 * identity headers) only from a trusted proxy (see Exchange): that chain is kept and the
 * peer appended; otherwise X-Forwarded-For is the peer alone.
 *
 * `trace` (W3C trace context): when it replaces the client's traceparent, its own is the
 * list's last value, so a traced attempt can put its span's there (forwarding.ts); a new
 * trace also drops the client's tracestate. Without `trace` both go on as they came.
 */
export function upstreamHeaders(ex: StepRequest, plan: EditPlan | null, trace: UpstreamTrace | null = null): string[] {
  const listed = connectionListed(ex.headerList('connection'));
  const drop = plan === null || plan.drop.length === 0 ? null : plan.drop;
  // The request's id replaces whatever the client sent in its header.
  const idHeader = ex.requestIdHeader;
  const h = ex.headers;
  const out: string[] = [];
  let xff: string | undefined;
  let host = '';
  for (let i = 0; i < h.length; i += 2) {
    const k = h[i]!;
    const v = h[i + 1]!;
    const kind = SPECIAL.get(k);
    if (kind === DROP || (listed && listed.has(k)) || k === idHeader) continue;
    if (kind === XFF) {
      xff = xff ? `${xff}, ${v}` : v;
      continue;
    }
    if (kind === HOST) host = v;
    else if (trace !== null && trace.replaced !== null && (kind === TRACE_PARENT || (kind === TRACE_STATE && trace.fresh))) continue;
    if (drop !== null && drop.includes(k)) continue;
    if (kind === COOKIE && v.includes(CONSOLE_COOKIE_PREFIX)) {
      // The console's cookies (session, sign-in) reach a data port on the admin's host name: never pass them on.
      const rest = withoutConsoleSession(v);
      if (rest !== null) out.push(k, rest);
      continue;
    }
    out.push(k, v);
  }
  if (drop === null || !drop.includes('x-forwarded-for')) out.push('x-forwarded-for', xff ? `${xff}, ${ex.remoteAddress}` : ex.remoteAddress);
  if (drop === null || !drop.includes('x-forwarded-proto')) out.push('x-forwarded-proto', ex.scheme);
  if (host && (drop === null || !drop.includes('x-forwarded-host'))) out.push('x-forwarded-host', host);
  if (ex.localPort && (drop === null || !drop.includes('x-forwarded-port'))) out.push('x-forwarded-port', ex.localPort);
  // The id goes up once and is the one the client gets back: a step's set or add of its
  // header is not sent (a remove is: no id upstream).
  const tail = plan === null ? null : plan.tail;
  let stepId = false;
  if (idHeader !== null && tail !== null) for (let i = 0; i < tail.length && !stepId; i += 2) stepId = tail[i] === idHeader;
  if (idHeader !== null && (stepId || drop === null || !drop.includes(idHeader))) out.push(idHeader, ex.requestId);
  // A traceparent the gateway replaced goes last, so each traced attempt can put its own span there.
  const traceparent = trace === null ? null : trace.replaced;
  if (tail !== null) {
    for (let i = 0; i < tail.length; i += 2) {
      const k = tail[i]!;
      if ((!stepId || k !== idHeader) && (traceparent === null || k !== 'traceparent')) out.push(k, tail[i + 1]!);
    }
  }
  if (traceparent !== null) out.push('traceparent', traceparent);
  return out;
}
