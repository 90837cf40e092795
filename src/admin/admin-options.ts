import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';
import type { Operation } from './contract.js';
import type { OpRouter } from './op-router.js';
import type { OpHandler } from './op-context.js';
import type { TokenResolver } from './authorize.js';
import type { SessionResolver } from './oidc/console-sessions.js';
import type { AuthThrottle } from './auth-throttle.js';
import type { AuditSink } from './audit-trail.js';
import type { Redactor } from './redact.js';
import type { TransactionOptions } from '../contracts/store-db.js';
import type { CallsInProgress } from './calls-in-progress.js';

export interface AdminServerOptions<S> {
  operations: readonly Operation[];
  handlers: Record<string, OpHandler<S>>;
  resolvers: readonly TokenResolver[];
  /** Console sessions (admin.oidc): the cookie path of the auth gate; `secure` marks cookies Secure. Absent: bearer tokens only. */
  sessions?: { resolver: SessionResolver; secure: boolean };
  services: S;
  log: Logger;
  /** Failed authentications per client address; absent: no throttling. */
  throttle?: AuthThrottle;
  /** Receives every authenticated write (config, publish, key, plugin), refused or not. */
  audit?: AuditSink;
  /**
   * Runs a write handler and its audit record in one store transaction, so an answered
   * write always has its record; `tenant` queues a tenant's writes (StoreDb.transaction).
   * Absent: no transaction.
   */
  transaction?: <T>(fn: () => Promise<T>, opts?: TransactionOptions) => Promise<T>;
  /** Whether a string is a system key's token: such a path segment is redacted and never names a tenant or entity. */
  isSystemToken?: (s: string) => boolean;
  /** Open connections one client address may hold (admin.maxConnectionsPerAddress); absent: no cap. */
  maxConnectionsPerAddress?: number;
  /** Open connections in all (admin.maxConnections), lowered to what the descriptor limit leaves; absent: no cap. */
  maxConnections?: number;
}

/** What every call shares: the options, the router and redactor built from them once, and what the connection cap is told. */
export type AdminCallDeps<S> = AdminServerOptions<S> & { router: OpRouter; redact: Redactor; calls: CallsInProgress; authenticated?: (socket: Socket) => void };

