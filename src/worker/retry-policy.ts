import type { CompiledCluster } from '../contracts/generation.js';
import { RetryBudget } from './retry-budget.js';
import { errors } from 'undici';
import { connectFailed, connectionClosed } from './upstream-failure.js';

/** How a replayable request is tried again: the retry step's, or its cluster's. */
export interface RetryPolicy {
  attempts: number;
  statuses: ReadonlySet<number>;
  backoffMs: number;
  /** Which failures before an answer are tried again (default: upstream-failure.ts `retriable`). */
  errors?: (err: Error) => boolean;
  /** The cluster's budget: a retry happens only while it has room. */
  budget?: RetryBudget;
  /** The next attempt goes to another target of the cluster. */
  elsewhere?: boolean;
  /** Each attempt's wait for the answer head, when shorter than the request's headersMs. */
  perTryMs?: number;
}

/** The cluster's `retry` as a policy with its budget (one per worker and generation), or null. */
export function clusterRetry(spec: CompiledCluster): RetryPolicy | null {
  const r = spec.retry;
  if (!r) return null;
  const on = new Set(r.on);
  return {
    attempts: r.attempts,
    statuses: new Set(r.on.filter((o) => /^\d+$/.test(o)).map(Number)),
    backoffMs: 0,
    // An attempt that timed out waiting for the head would answer 504: "504" retries it.
    errors: (err) =>
      (on.has('connect-failure') && connectFailed(err)) || (on.has('reset') && connectionClosed(err)) || (on.has('504') && err instanceof errors.HeadersTimeoutError),
    budget: new RetryBudget(r.budgetPercent, r.minRetriesPerSecond),
    elsewhere: true,
    ...(r.perTryTimeoutMs === undefined ? {} : { perTryMs: r.perTryTimeoutMs }),
  };
}
