// CPU time (user + system) of a process and all its descendants, read from /proc.
// A figure per request that holds up on a noisy shared machine better than
// requests/s: a busy neighbour slows a server down but does not make its requests
// cost more CPU. Linux only; elsewhere every reading is null.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on every Linux this runs on

function stat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** Server CPU µs a request between two treeCpuMs readings, or null when either is missing or nothing was answered. */
export function cpuUsPerRequest(beforeMs, afterMs, requests) {
  return beforeMs === null || afterMs === null || !requests ? null : ((afterMs - beforeMs) * 1000) / requests;
}

/** Milliseconds of CPU used so far by `root` and its live descendants, or null without /proc. */
export function treeCpuMs(root) {
  let pids;
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return null;
  }
  const byParent = new Map();
  const ticks = new Map();
  for (const pid of pids) {
    const s = stat(pid);
    if (!s) continue;
    ticks.set(pid, s.ticks);
    if (!byParent.has(s.ppid)) byParent.set(s.ppid, []);
    byParent.get(s.ppid).push(pid);
  }
  if (!ticks.has(root)) return null;
  let total = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    total += ticks.get(pid) ?? 0;
    for (const c of byParent.get(pid) ?? []) todo.push(c);
  }
  return total * TICK_MS;
}

/**
 * Per-CPU tick counters from /proc/stat: `steal` is time the hypervisor gave this
 * virtual CPU to someone else. Null without /proc.
 */
export function cpuTicks() {
  try {
    const out = new Map();
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (!m) continue;
      const f = m[2].split(/\s+/).map(Number);
      // user nice system idle iowait irq softirq steal (guest time is inside user)
      out.set(m[1], { total: f.slice(0, 8).reduce((a, b) => a + b, 0), steal: f[7] ?? 0 });
    }
    return out;
  } catch {
    return null;
  }
}

/** Percent of `cpu`'s time (null: all CPUs') stolen by the hypervisor between two cpuTicks() readings, or null. */
export function stealPercent(before, after, cpu) {
  const a = cpu === null ? sum(before) : before?.get(String(cpu));
  const b = cpu === null ? sum(after) : after?.get(String(cpu));
  if (!a || !b || b.total <= a.total) return null;
  return (100 * (b.steal - a.steal)) / (b.total - a.total);
}

function sum(ticks) {
  if (!ticks) return undefined;
  let total = 0;
  let steal = 0;
  for (const t of ticks.values()) {
    total += t.total;
    steal += t.steal;
  }
  return { total, steal };
}
