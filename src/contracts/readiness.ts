/** The store's part of readiness: `ms` the query took (or was waited on); `detail` why it is not ready. */
export interface StoreVerdict {
  ok: boolean;
  ms: number;
  detail?: string;
}

/** The workers' part of readiness: `ready` of `total` listen on `generation`, the node's current one. */
export interface WorkersVerdict {
  ok: boolean;
  ready: number;
  total: number;
  generation: number;
  /** Each worker that is not ready and why, joined by "; ". */
  detail?: string;
}

/** The body of `/readyz`: 200 when `ready`, else 503. */
export interface ReadinessReport {
  ready: boolean;
  checks: { workers: WorkersVerdict; store: StoreVerdict };
}
