/** Index in the shared cell: the main loop's last heartbeat, a monotonic clock in ms (wrapping). */
export const BEAT = 0;
/** Index in the shared cell: the site of the step whose synchronous part runs now (0: none). */
export const RUNNING = 1;
/** Index in the shared cell: the site of the last step started (kept after it returns). */
export const LAST = 2;

/** A step's place: what a stall report names. */
export interface StepSite {
  tenant: string;
  route: string;
  step: string;
}

/** A route's view of the sites: the shared cell its pipeline writes to, and its steps' ids. */
export interface RouteSites {
  readonly cell: Int32Array;
  id(step: string): number;
}

/** Milliseconds of a monotonic clock every thread of the process reads alike, as an int32 (it wraps; compare by difference). */
export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return (s * 1000 + Math.floor(ns / 1e6)) | 0;
}

/**
 * The numbers a pipeline writes when a step starts (one typed-array store, no allocation),
 * and what each number names, for the worker's stall watchdog (stall-watchdog.ts), which
 * reads the same cell from its thread. A (tenant, route, step) keeps its number across
 * generations, so the table only grows by places never seen before in this process.
 */
export class StepSites {
  /** BEAT, RUNNING, LAST: shared with the watchdog thread. */
  readonly cell = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private readonly ids = new Map<string, number>();
  private added: [number, StepSite][] = [];

  forRoute(tenant: string, route: string): RouteSites {
    return { cell: this.cell, id: (step) => this.id({ tenant, route, step }) };
  }

  private id(site: StepSite): number {
    const key = `${site.tenant}\n${site.route}\n${site.step}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      this.ids.set(key, (id = this.ids.size + 1));
      this.added.push([id, site]);
    }
    return id;
  }

  /** The step last started in this worker (LAST), for a fault no request owns; null before any. */
  lastStarted(): StepSite | null {
    const id = this.cell[LAST]!;
    if (id === 0) return null;
    for (const [key, n] of this.ids) if (n === id) return ((([tenant, route, step]) => ({ tenant: tenant!, route: route!, step: step! }))(key.split('\n')));
    return null;
  }

  /** The sites numbered since the last call: what the watchdog thread does not know yet. */
  takeAdded(): [number, StepSite][] {
    const out = this.added;
    this.added = [];
    return out;
  }
}
