import type { IncomingHttpHeaders } from 'node:http';
import type { Identity } from './identity.js';
import type { Params } from './op-router.js';
import type { Operation } from './contract.js';

/** What a handler gets: the checked call, and the supervisor's services. */
export interface OpContext<S = unknown> {
  op: Operation;
  params: Params;
  query: URLSearchParams;
  body: unknown;
  identity: Identity | null;
  traceId: string;
  /** The request's headers (console sign-in reads its cookies and Accept). */
  headers: IncomingHttpHeaders;
  /** The socket peer's address (never X-Forwarded-*): console sign-in counts its failures against it. */
  peer: string;
  services: S;
  /** What the audit entry of a write names: handlers fill in what the path does not say. */
  audit: AuditNote;
}

export interface AuditNote {
  target?: string;
  generation?: number;
  /**
   * Appends the write's record (status 200) now: an asynchronous handler calls it inside
   * the transaction that commits its change (a publish's generation). Set by the admin server.
   */
  commit?: () => Promise<void>;
}

/** A handler's answer. A plain value is a 200 with that JSON body. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** Set for a non-JSON answer (the body is then a string sent as is). */
    readonly contentType?: string,
    /** Headers the answer adds (a redirect's Location, Set-Cookie). */
    readonly headers?: Record<string, string | string[]>,
  ) {}
}

export type OpHandler<S = unknown> = (ctx: OpContext<S>) => unknown | Promise<unknown>;

const OWN_TRANSACTION = Symbol('own transaction');

/**
 * Marks a write handler that commits in transactions of its own (a publish: its generation is
 * committed, then the workers are waited on) and calls `audit.commit` in the one that commits
 * its change. Any other audited write runs whole inside one transaction with its record.
 */
export function ownTransaction<S>(h: OpHandler<S>): OpHandler<S> {
  return Object.assign(h, { [OWN_TRANSACTION]: true });
}

export function hasOwnTransaction(h: OpHandler<never>): boolean {
  return (h as { [OWN_TRANSACTION]?: boolean })[OWN_TRANSACTION] === true;
}
