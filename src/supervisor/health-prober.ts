import { Client } from 'undici';
import type { CompiledHealthCheck, CompiledTls } from '../contracts/generation.js';
import { targetConnection } from '../shared/upstream-connect.js';
import type { UpstreamGuard } from '../shared/upstream-guard.js';
import { targetParts } from '../shared/target-url.js';
import { UpstreamTlsError } from '../shared/upstream-tls.js';
import type { TargetHealth } from '../contracts/node-status.js';


/**
 * Probes one target of one cluster every `intervalMs` and turns the answers into a state
 * that changes only at the thresholds: `unhealthyThreshold` failures in a row take it out,
 * `healthyThreshold` successes in a row bring it back. A probe still running when the next
 * is due is not doubled. Connections go through the tenant's upstream policy and, to an
 * https target, the cluster's TLS settings, as the workers' do: a health check reaches
 * nothing its cluster could not, and trusts what the cluster trusts.
 */
export class HealthProber {
  state: TargetHealth;
  successes = 0;
  failures = 0;
  lastCheckedAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private client: Client;
  /** https: the servername every probe carries (upstream-connect.ts). */
  private servername: string | undefined;

  constructor(
    readonly tenant: string,
    readonly target: string,
    public check: CompiledHealthCheck,
    public tls: CompiledTls | undefined,
    /** Called when the state changes, after it changed. */
    private readonly changed: (p: HealthProber, from: TargetHealth, why: string) => void,
    /** The upstream policy the workers' connections pass too. */
    private readonly guard: UpstreamGuard,
  ) {
    this.state = check.initial;
    this.client = this.newClient();
  }

  start(): void {
    this.stopTimer();
    this.timer = setInterval(() => void this.probe(), this.check.intervalMs);
    this.timer.unref();
    void this.probe();
  }

  /** New settings, same target: the state and counters stay. */
  retune(check: CompiledHealthCheck, tls: CompiledTls | undefined): void {
    const sameConnection = check.timeoutMs === this.check.timeoutMs && JSON.stringify(tls) === JSON.stringify(this.tls);
    this.check = check;
    this.tls = tls;
    if (!sameConnection) {
      void this.client.close().catch(() => undefined);
      this.client = this.newClient();
    }
    this.start();
  }

  stop(): void {
    this.stopTimer();
    void this.client.destroy().catch(() => undefined);
  }

  private newClient(): Client {
    const c = targetConnection(this.guard, this.tenant, this.target, { connectMs: this.check.timeoutMs, ...(this.tls ? { tls: this.tls } : {}) });
    this.servername = c.servername;
    return new Client(c.origin, {
      connect: c.connect,
      headersTimeout: this.check.timeoutMs,
      bodyTimeout: this.check.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async probe(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let why: string;
    try {
      const host = this.check.host ?? targetParts(this.target).hostPort;
      const sni = this.servername === undefined ? {} : { servername: this.servername };
      const r = await this.client.request({ method: 'GET', path: this.check.path, headers: { host, 'user-agent': 'switchyard-health-check' }, ...sni } as Parameters<Client['request']>[0]);
      await r.body.dump({ limit: 64 * 1024 });
      why = `status ${r.statusCode}`;
      this.record(this.expected(r.statusCode), why);
    } catch (err) {
      // A failed handshake says why (Node's code and message), as the workers' log line does.
      why = err instanceof UpstreamTlsError ? err.message : ((err as { code?: string }).code ?? (err as Error).message);
      this.record(false, why);
    } finally {
      this.running = false;
      this.lastCheckedAt = Date.now();
    }
  }

  private expected(status: number): boolean {
    const e = this.check.expectStatus;
    return e.length === 0 ? status >= 200 && status < 400 : e.includes(status);
  }

  private record(ok: boolean, why: string): void {
    if (ok) {
      this.successes++;
      this.failures = 0;
      if (this.state === 'unhealthy' && this.successes >= this.check.healthyThreshold) this.flip('healthy', why);
    } else {
      this.failures++;
      this.successes = 0;
      if (this.state === 'healthy' && this.failures >= this.check.unhealthyThreshold) this.flip('unhealthy', why);
    }
  }

  private flip(to: TargetHealth, why: string): void {
    const from = this.state;
    this.state = to;
    this.changed(this, from, why);
  }
}
