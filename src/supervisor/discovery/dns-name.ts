import type { DnsRecordType, DiscoveryState } from '../../contracts/discovery.js';
import type { Logger } from '../../shared/logger.js';
import type { Answer } from './dns-query.js';
import { refreshSeconds, retrySeconds } from './refresh-delay.js';
import { resultClass } from './result-class.js';

export interface DnsNameHooks {
  /** Asks the server (dns-query.ts, bounded in time). */
  query: () => Promise<Answer>;
  /** A good answer arrived (the sources derive their sets from `answer`). */
  answered: () => void;
  /** The clusters whose targets name it, for the log lines. */
  clusters: () => string[];
  log: Logger;
}

/**
 * One name+type a tenant's clusters write, resolved once however many clusters and ports
 * name it: its last good answer, its state, and when it is asked next (its sources'
 * shortest refreshSeconds, else the records' TTL: refresh-delay.ts). A name that stops
 * resolving keeps its last good answer (fail static) and is asked again every few
 * seconds; each transition is logged once per cluster.
 */
export class DnsName {
  state: DiscoveryState = 'pending';
  /** The last good answer (null: none yet). */
  answer: Answer | null = null;
  lastAt: number | null = null;
  /** `ok`, or the last failure's class (result-class.ts). */
  lastResult: string | null = null;
  nextAt: number | null = null;
  readonly counts = { ok: 0, error: 0 };
  /** The shortest refreshSeconds its sources write (undefined: the records' TTL). */
  refresh: number | undefined;
  private timer: NodeJS.Timeout | null = null;
  /** The last failure's code logged (null: the last resolution succeeded). */
  private failing: string | null = null;
  private stopped = false;
  private resolving = false;

  constructor(
    readonly tenant: string,
    readonly name: string,
    readonly type: DnsRecordType,
    refresh: number | undefined,
    private readonly hooks: DnsNameHooks,
  ) {
    this.refresh = refresh;
  }

  /** Served (again): asked now if it never was, else when its refresh falls due counted from the last resolution. */
  start(): void {
    this.stopped = false;
    this.stoppedAt = null;
    if (this.resolving) return;
    if (this.lastAt === null) return void this.resolve();
    this.schedule(this.dueIn());
  }

  /** Its sources' refreshSeconds changed (a publish): the next resolution moves at once, counted from the last one. */
  setRefresh(seconds: number | undefined): void {
    if (seconds === this.refresh) return;
    this.refresh = seconds;
    if (this.resolving || this.stopped || this.lastAt === null) return;
    this.schedule(this.dueIn());
  }

  /** No served generation names it: no more queries (its last answer is kept for a publish that names it again). */
  stop(): void {
    this.stopped = true;
    this.stoppedAt = Date.now();
    this.clear();
  }

  /** When it stopped (null: it is served). */
  stoppedAt: number | null = null;

  private dueIn(): number {
    const delay = this.failing === null ? refreshSeconds(this.refresh, this.answer?.ttls ?? []) : retrySeconds(this.refresh);
    return Math.max(0, this.lastAt! + delay * 1000 - Date.now());
  }

  private async resolve(): Promise<void> {
    this.timer = null;
    this.resolving = true;
    let answer: Answer;
    try {
      answer = await this.hooks.query();
    } catch (err) {
      this.resolving = false;
      if (!this.stopped) this.failed(err as NodeJS.ErrnoException);
      return;
    }
    this.resolving = false;
    if (this.stopped) return;
    this.lastAt = Date.now();
    this.lastResult = 'ok';
    this.counts.ok++;
    if (this.failing !== null && this.state === 'fail-static') for (const cluster of this.hooks.clusters()) this.hooks.log.info({ tenant: this.tenant, cluster, name: this.name }, 'DNS discovery: the name resolves again');
    this.failing = null;
    this.state = 'ok';
    this.answer = answer;
    this.hooks.answered();
    this.schedule(refreshSeconds(this.refresh, answer.ttls) * 1000);
  }

  private failed(err: NodeJS.ErrnoException): void {
    const code = err.code ?? err.message;
    this.lastAt = Date.now();
    this.lastResult = resultClass(code);
    this.counts.error++;
    if (this.state === 'ok') this.state = 'fail-static';
    if (this.failing === null) {
      for (const cluster of this.hooks.clusters()) {
        const line = { tenant: this.tenant, cluster, name: this.name, type: this.type, error: code };
        if (this.state === 'fail-static') this.hooks.log.warn(line, 'DNS discovery: the name does not resolve; the last addresses keep serving (fail static)');
        else this.hooks.log.warn(line, 'DNS discovery: the name does not resolve yet; the cluster has no address from it (503 Svc.Data.NoTargets without others)');
      }
    }
    this.failing = code;
    this.schedule(retrySeconds(this.refresh) * 1000);
  }

  private schedule(ms: number): void {
    this.clear();
    this.nextAt = Date.now() + ms;
    this.timer = setTimeout(() => void this.resolve(), ms);
    this.timer.unref();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
