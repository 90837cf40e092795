import * as v from 'valibot';

const Whole = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** The defaults of worker.json's `limits`, each safe for a data port facing the internet. */
export const LIMIT_DEFAULTS = {
  headerTimeoutMs: 10_000,
  idleTimeoutS: 30,
  bodyTimeoutMs: 30_000,
  sendTimeoutMs: 30_000,
  maxHeadBytes: 16_384,
  maxTargetBytes: 8_192,
  maxBodyBytes: 100 * 1024 * 1024,
  maxConnections: 10_000,
  chunkedRequestBodies: 'accept',
  h2MaxConcurrentStreams: 100,
  // HTTP/2 counts 32 bytes more per header field than its text (RFC 7541 4.1): 32 KiB lets a
  // head that fits the HTTP/1.1 default of 16 KiB through in h2 too, as nginx's 4 x 8k buffers do.
  h2MaxHeaderListBytes: 32_768,
  h2MaxResetsPerSecond: 200,
  h2ResetCooldownS: 10,
  eventLoopStallMs: 2_000,
  workerHeapMb: 0,
} as const;

/**
 * worker.json `limits`: what one slow or large client may take of a worker (docs/reference.md
 * "Limits"). The head's field count is fixed by uWS at build time and is not a setting.
 */
export const LimitsSchema = v.optional(
  v.strictObject({
    /** A new connection's first request head must be complete within this (408, close), while no request came from its address. */
    headerTimeoutMs: v.optional(Whole(100, 600_000), LIMIT_DEFAULTS.headerTimeoutMs),
    /** uWS's idle timer: closes a connection without a complete head, an idle keep-alive one, a body slower than about 16 KiB/s. */
    idleTimeoutS: v.optional(Whole(1, 3_600), LIMIT_DEFAULTS.idleTimeoutS),
    /** The longest wait between two pieces of a request body (408, close). */
    bodyTimeoutMs: v.optional(Whole(100, 3_600_000), LIMIT_DEFAULTS.bodyTimeoutMs),
    /** The longest a response write may wait on a client that takes none of its bytes (close; the request ends 499). */
    sendTimeoutMs: v.optional(Whole(100, 3_600_000), LIMIT_DEFAULTS.sendTimeoutMs),
    /** Request line and headers together (431, by uWS). */
    maxHeadBytes: v.optional(Whole(1_024, 1_048_576), LIMIT_DEFAULTS.maxHeadBytes),
    /** The request target, path and query (414). */
    maxTargetBytes: v.optional(Whole(64, 1_048_576), LIMIT_DEFAULTS.maxTargetBytes),
    /** Every request body on the data port (413); a route's request-size-limit may lower it. */
    maxBodyBytes: v.optional(Whole(0, 2 ** 50), LIMIT_DEFAULTS.maxBodyBytes),
    /** Open connections one worker keeps; a connection beyond it is answered 503 and closed. */
    maxConnections: v.optional(Whole(1, 1_000_000), LIMIT_DEFAULTS.maxConnections),
    /**
     * `refuse`: a request with Transfer-Encoding gets 411 and a close, so uWS's chunk parser,
     * which misreads chunk extensions, never frames a body (docs/reference.md "HTTP conformance").
     */
    chunkedRequestBodies: v.optional(v.picklist(['accept', 'refuse']), LIMIT_DEFAULTS.chunkedRequestBodies),
    /** HTTP/2 (node engine): streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
    h2MaxConcurrentStreams: v.optional(Whole(1, 10_000), LIMIT_DEFAULTS.h2MaxConcurrentStreams),
    /** HTTP/2: the decoded header list one request may send, in bytes (SETTINGS_MAX_HEADER_LIST_SIZE; 431). */
    h2MaxHeaderListBytes: v.optional(Whole(1_024, 1_048_576), LIMIT_DEFAULTS.h2MaxHeaderListBytes),
    /** HTTP/2: stream resets one connection may cause per second before it gets GOAWAY (rapid reset, CVE-2023-44487). */
    h2MaxResetsPerSecond: v.optional(Whole(1, 100_000), LIMIT_DEFAULTS.h2MaxResetsPerSecond),
    /** HTTP/2: after a connection got that GOAWAY, new connections from its address are cut at accept for this long; 0: never. */
    h2ResetCooldownS: v.optional(Whole(0, 3_600), LIMIT_DEFAULTS.h2ResetCooldownS),
    /** A worker whose event loop is blocked this long (a step that never yields) is replaced; its connections are lost. */
    eventLoopStallMs: v.optional(Whole(1_000, 600_000), LIMIT_DEFAULTS.eventLoopStallMs),
    /** A worker whose V8 heap passes this many MiB is replaced after a drain; 0: no bound (V8's own). */
    workerHeapMb: v.optional(Whole(0, 1_048_576), LIMIT_DEFAULTS.workerHeapMb),
  }),
  {},
);

export type Limits = Required<v.InferOutput<typeof LimitsSchema>>;
