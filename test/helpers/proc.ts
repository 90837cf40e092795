import { readFileSync, readdirSync } from 'node:fs';

/** VmRSS of a process in bytes (Linux /proc), 0 when the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The summed RSS of several processes, in bytes. */
export function totalRss(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + rssBytes(pid), 0);
}

/**
 * Samples the summed RSS of `pids` every `intervalMs` until stopped; `peak` is the
 * highest sample seen (a sample is also taken at start and at stop).
 */
export function sampleRss(pids: readonly number[], intervalMs = 50): { stop(): { peak: number; samples: number } } {
  let peak = totalRss(pids);
  let samples = 1;
  const timer = setInterval(() => {
    peak = Math.max(peak, totalRss(pids));
    samples++;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, totalRss(pids));
      return { peak, samples: samples + 1 };
    },
  };
}

export const MiB = 1 << 20;

/** The running children of `pid`, from /proc (each task's `children` list); [] when it is gone. */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** A process's command line as its arguments; [] when it is gone. */
export function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** A process's command line as one string; '' when it is gone. */
export function commandOf(pid: number): string {
  return argvOf(pid).join(' ');
}

/** How many descriptors a process holds open (/proc/<pid>/fd); 0 when it is gone. */
export function openDescriptors(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}
