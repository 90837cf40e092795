/**
 * Where a worker's outlier reports go (the supervisor, over IPC; main.ts sets it). A
 * report is sent each time a target's failures in a row in this worker reach another
 * multiple of the cluster's consecutiveFailures: the supervisor decides node-wide.
 */
let send: ((cluster: string, target: string) => void) | null = null;

export function setOutlierSender(fn: (cluster: string, target: string) => void): void {
  send = fn;
}

export function reportOutlier(cluster: string, target: string): void {
  send?.(cluster, target);
}
