import * as v from 'valibot';

/** The defaults of worker.json's `readiness`. */
export const READINESS_DEFAULTS = { storeTimeoutMs: 1_000 } as const;

/**
 * A readiness path on the data port: segments of unreserved characters, no empty or dot
 * segment and no trailing slash, so it is already in the normal form every path policy
 * gives a request path, and the worker compares the routed path with it as a string.
 */
const DATA_PATH = /^(\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~-]+)+$/;

/**
 * worker.json `readiness` (docs/reference.md "Liveness and readiness"): the bound on the
 * store's check behind `/readyz`, and an optional data-port path answering the same verdict.
 * No default path: a tenant route's path is never taken by surprise.
 */
export const ReadinessSchema = v.optional(
  v.strictObject({
    /** The store must answer a cheap query within this, or the node is not ready. */
    storeTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(30_000)), READINESS_DEFAULTS.storeTimeoutMs),
    /** A path the data port answers itself, before routing: 200 ready, 503 not ready. */
    dataPath: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(256, 'must be at most 256 characters'),
        v.regex(DATA_PATH, 'must be an absolute path of segments of letters, digits and -._~ (no trailing slash, no . or .. segment, no query)'),
      ),
    ),
  }),
  {},
);

export type ReadinessConfig = v.InferOutput<typeof ReadinessSchema>;
