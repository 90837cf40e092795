import { SMUGGLED, type Case } from './conformance-cases.js';
import { sendRaw, type Outcome, type Tap } from './conformance-runner.js';
import type { Upstream } from './upstream.js';
import { sleep } from './wait.js';

/** One exchange to run: a case as written, or a framing case with `GET /smuggled` behind it. */
export interface Run {
  name: string;
  case: Case;
  smuggle: boolean;
  send: string[];
}

export function expand(cases: Case[]): Run[] {
  return cases.flatMap((c) => {
    const plain: Run = { name: c.name, case: c, smuggle: false, send: c.send };
    if (!c.framing) return [plain];
    const last = c.send.length - 1;
    const send = c.send.map((w, i) => (i === last ? w + SMUGGLED : w));
    return [plain, { name: `${c.name} +smuggled`, case: c, smuggle: true, send }];
  });
}

/** What a client saw, and what reached the upstream behind the proxy during the exchange. */
export interface Seen extends Outcome {
  /** Bytes the upstream received, latin1. */
  forwarded: string;
  /** Request targets the upstream received. */
  urls: string[];
}

/**
 * Runs one exchange on a fresh connection; the runs through one upstream go one at a time
 * (what reached it is told apart by order), so each side compared has an upstream of its own.
 * `patient`: the answer may take a timeout (an incomplete request, a known exception).
 */
export async function observe(port: number, tap: Tap, up: Upstream, run: Run, patient: boolean): Promise<Seen> {
  const bytes = tap.text().length;
  const reqs = up.requests.length;
  const want = run.smuggle ? 1 : (run.case.expect.served ?? 1);
  const out = await sendRaw(port, run.send, { want, settleMs: 100, timeoutMs: patient ? 3_000 : 5_000 });
  await sleep(30); // anything forwarded late shows up here, not in the next run
  return { ...out, forwarded: tap.text().slice(bytes), urls: up.requests.slice(reqs).map((r) => r.url) };
}

export const served = (s: Seen) => s.statuses.filter((x) => x >= 200 && x < 300).length;
const finalStatus = (s: Seen) => s.statuses.find((x) => x >= 200);
/** Refused: nothing reached the upstream, and the answer was 4xx/5xx or a close before any 2xx. */
export const refused = (s: Seen) => s.urls.length === 0 && ((finalStatus(s) ?? 0) >= 400 || (s.closed && served(s) === 0));
export const smuggled = (s: Seen) => s.urls.filter((u) => u.startsWith('/smuggled')).length;
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** A short account for the side-by-side table: `400 BadFraming close`, `200x2 fwd2`, `- open`. */
export function label(s: Seen): string {
  const code = /"code":"Svc\.(?:Data\.)?(\w+)"/.exec(s.raw)?.[1];
  const parts = [s.statuses.filter((x) => x >= 200).join('/') || '-'];
  if (code) parts.push(code);
  parts.push(s.closed ? 'close' : 'open');
  if (s.urls.length) parts.push(`fwd${s.urls.length}`);
  if (smuggled(s)) parts.push('SMUGGLED');
  return parts.join(' ');
}

/** How the gateway's answer to `run` breaks the case's expectation; empty when it does not. `excepted`: no 100 ms bound. */
export function problems(run: Run, s: Seen, excepted: boolean): string[] {
  const e = run.case.expect;
  const out: string[] = [];
  const status = finalStatus(s);
  const leaked = count(s.forwarded, '/smuggled') > smuggled(s);
  if (leaked !== Boolean(e.leaks)) out.push(leaked ? 'bytes of /smuggled reached the upstream inside another request' : 'expected the known leak: drop `leaks` and its exception');
  if (!run.case.incomplete && !excepted && (s.ms === null || s.ms > 100)) out.push(`not answered or closed within 100 ms (${s.ms} ms)`);
  if (e.served === 0 && (served(s) > 0 || s.urls.length > 0)) out.push(`expected nothing served or forwarded, got ${label(s)}`);
  // Behind a served request /smuggled is a pipelined one: uWS may serve it, refuse it or close unanswered.
  else if (e.served !== undefined && !run.smuggle && served(s) !== e.served) out.push(`expected ${e.served} served, got ${served(s)}`);
  if (e.status !== undefined) {
    const allowed = ([] as number[]).concat(e.status);
    // With bytes behind it, a refusal may be a close without the answer ("Refusals before pipelined bytes").
    const unanswered = run.smuggle && status === undefined && s.closed;
    if (!unanswered && (status === undefined || !allowed.includes(status))) out.push(`expected status ${allowed.join('|')}, got ${status ?? 'none'}`);
    if (s.forwarded.length) out.push(`a refused request reached the upstream: ${JSON.stringify(s.forwarded.slice(0, 120))}`);
  }
  if ((e.close || (run.smuggle && e.status !== undefined)) && !s.closed) out.push('expected the connection closed after the answer');
  if (run.case.framing && status !== undefined && status >= 400 && !s.closed) out.push('a framing refusal must close the connection');
  if (run.smuggle && refused(s) && smuggled(s)) out.push('/smuggled reached the upstream behind a refused request');
  return out;
}
