import type { RouteSpans } from './route-spans.js';
import { DURATION_BUCKETS, METRIC_METHODS, UPSTREAM_ERROR_KINDS, type HistogramDelta, type UpstreamErrorKind } from '../../contracts/metrics.js';

const BOUNDS = DURATION_BUCKETS;
const STATUS_KIND = UPSTREAM_ERROR_KINDS.indexOf('status');

/** Plain counters for one histogram; `take` hands over what moved and starts again from zero. */
export class Histogram {
  private buckets: number[] = new Array<number>(BOUNDS.length + 1).fill(0);
  private sum = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < BOUNDS.length && seconds > BOUNDS[i]!) i++;
    this.buckets[i]!++;
    this.sum += seconds;
  }

  take(): HistogramDelta {
    const d = { buckets: this.buckets, sum: this.sum };
    this.buckets = new Array<number>(BOUNDS.length + 1).fill(0);
    this.sum = 0;
    return d;
  }
}

/** `method` label index: a switch, no map lookup, for the usual methods. */
export function methodIndex(method: string): number {
  switch (method) {
    case 'GET':
      return 0;
    case 'HEAD':
      return 1;
    case 'POST':
      return 2;
    case 'PUT':
      return 3;
    case 'DELETE':
      return 4;
    case 'PATCH':
      return 5;
    case 'OPTIONS':
      return 6;
    case 'TRACE':
      return 7;
    case 'CONNECT':
      return 8;
    default:
      return METRIC_METHODS.length - 1;
  }
}

/** What the metrics, the access log and the tracer know of a route: its names, and its counters in this worker. */
export class RouteMeter {
  /** Per method index * 5 + status class. */
  requests: number[] = new Array<number>(METRIC_METHODS.length * 5).fill(0);
  readonly duration = new Histogram();
  bytesReceived = 0;
  bytesSent = 0;
  /** `step status` -> count. */
  rejections: Map<string, number> | null = null;
  /** `step reason` -> count: steps that threw or outlived their budget; null until one did (most routes never). */
  failures: Map<string, number> | null = null;
  /** gRPC calls per GRPC_STATUS_LABELS index; null until the route's first one (most routes have none). */
  grpc: number[] | null = null;
  /** oauth-introspection's counts per INTROSPECTION_EVENTS index; null until the route's first (most routes have none). */
  introspection: number[] | null = null;
  /** Moved since the last shipment (it is in the registry's list of those). */
  moved = false;
  /** The tracer's attributes and span name of this route, made at its first recorded span. */
  spans: RouteSpans | null = null;

  constructor(
    /** '' for requests no route took. */
    readonly tenant: string,
    readonly route: string,
  ) {}
}

/** One target of a cluster: time to first byte and failures, per attempt. */
export class UpstreamMeter {
  readonly duration = new Histogram();
  errors: number[] = new Array<number>(UPSTREAM_ERROR_KINDS.length).fill(0);
  moved = false;

  constructor(
    /** The cluster's tenant and own name (clusterNames). */
    readonly tenant: string,
    readonly cluster: string,
    readonly target: string,
    private readonly onMove: (m: UpstreamMeter) => void,
  ) {}

  answered(ms: number, status: number): void {
    this.duration.observe(ms / 1000);
    if (status >= 500) this.errors[STATUS_KIND]!++;
    if (!this.moved) this.onMove(this);
  }

  failed(kind: UpstreamErrorKind): void {
    this.errors[UPSTREAM_ERROR_KINDS.indexOf(kind)]!++;
    if (!this.moved) this.onMove(this);
  }
}
