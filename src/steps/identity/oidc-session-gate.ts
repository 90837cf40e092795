import type { Flow, StepOutcome } from '../step.js';
import { stepError } from '../reply.js';
import { setCookieLine } from './sealed-cookie.js';
import type { Session, Sessions } from './oidc-session.js';
import type { OidcLoginFlow } from './oidc-login-flow.js';

/** How long a settled refresh answers requests that still carry the cookie it replaced. */
const RENEWAL_KEPT_MS = 30_000;

export type Renewal = { session: Session; value: string } | null;

/**
 * What every request of the route goes through: the session cookie opened, refreshed
 * `refreshBeforeSeconds` before its tokens expire, the identity checked and its claims set
 * upstream. Without a session a browser is sent to sign in, an API client gets 401.
 */
export class SessionGate {
  private readonly unauthenticated = stepError('Svc.Data.Unauthenticated', 'Sign in first: no valid session');

  constructor(
    private readonly sessions: Sessions,
    private readonly login: OidcLoginFlow,
    private readonly check: (flow: Flow, claims: Record<string, unknown>) => StepOutcome,
    private readonly refreshBeforeSeconds: number,
    /** Refreshes in flight or just settled, by refresh token (the step's state): a page's parallel requests share one. */
    private readonly refreshing: Map<string, Promise<Renewal>>,
  ) {}

  /** Sync in the usual case (a session far from expiry): no promise per request. */
  pass(flow: Flow): StepOutcome | Promise<StepOutcome> {
    const now = Date.now() / 1000;
    const session = this.sessions.cookie.open(flow.req.cookie(this.sessions.cookie.name), now);
    if (session === null) return this.noSession(flow);
    if (session.x - this.refreshBeforeSeconds > now) return this.admit(flow, session);
    if (session.r === undefined) return session.x > now ? this.admit(flow, session) : this.noSession(flow);
    return this.refreshOnce(session).then((renewed) => {
      const scope = this.login.scope(flow);
      if (renewed === null) {
        flow.addResponseHeader('set-cookie', setCookieLine(this.sessions.cookie.name, '', 0, scope));
        return this.noSession(flow);
      }
      const maxAge = this.sessions.cookieExpiry(renewed.session) - Math.floor(Date.now() / 1000);
      flow.addResponseHeader('set-cookie', setCookieLine(this.sessions.cookie.name, renewed.value, maxAge, scope));
      return this.admit(flow, renewed.session);
    });
  }

  private admit(flow: Flow, session: Session): StepOutcome {
    const refused = this.check(flow, session.c);
    if (refused === undefined) flow.vars.consumer = session.s;
    return refused;
  }

  private noSession(flow: Flow): StepOutcome | Promise<StepOutcome> {
    return wantsPage(flow) ? this.login.signIn(flow) : this.unauthenticated;
  }

  private refreshOnce(session: Session): Promise<Renewal> {
    const rt = session.r!;
    let p = this.refreshing.get(rt);
    if (p === undefined) {
      // Kept a while after it settles: a request that left before the new cookie arrived
      // gets the same renewal, not a second refresh with a token the provider may have rotated.
      // Never past the renewal's own refresh point: it would be admitted with tokens due for renewal.
      p = this.login.refresh(session).then((renewed) => {
        const due = renewed === null ? RENEWAL_KEPT_MS : (renewed.session.x - this.refreshBeforeSeconds) * 1000 - Date.now();
        setTimeout(() => this.refreshing.delete(rt), Math.max(0, Math.min(RENEWAL_KEPT_MS, due))).unref();
        return renewed;
      });
      this.refreshing.set(rt, p);
    }
    return p;
  }
}

/** A browser asking for a page (GET or HEAD accepting HTML): sent to sign in. Others get 401. */
function wantsPage(flow: Flow): boolean {
  const m = flow.req.method;
  if (m !== 'GET' && m !== 'HEAD') return false;
  return /\btext\/html\b|\bapplication\/xhtml\+xml\b/i.test(flow.req.headerList('accept') ?? '');
}
