import { Client } from 'undici';
import type { CompiledCluster, CompiledHealthCheck, CompiledTls } from '../contracts/generation.js';
import { targetConnection, type TargetConnection } from '../shared/upstream-connect.js';
import { probeH2 } from './h2-probe.js';
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
 * nothing its cluster could not, and trusts what the cluster trusts. An h2/h2c cluster's
 * targets are probed over HTTP/2, a session per probe (h2-probe.ts).
 */
export class HealthProber {
  state: TargetHealth;
  successes = 0;
  failures = 0;
  lastCheckedAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** HTTP/1.1: a keep-alive client; h2/h2c: how each probe's session connects. */
  private client: Client | TargetConnection;
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
    /** The cluster's protocol: h2/h2c targets are probed over HTTP/2. */
    public protocol: CompiledCluster['protocol'] = undefined,
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
  retune(check: CompiledHealthCheck, tls: CompiledTls | undefined, protocol: CompiledCluster['protocol'] = undefined): void {
    const sameConnection = check.timeoutMs === this.check.timeoutMs && JSON.stringify(tls) === JSON.stringify(this.tls) && protocol === this.protocol;
    this.check = check;
    this.tls = tls;
    this.protocol = protocol;
    if (!sameConnection) {
      if (this.client instanceof Client) void this.client.close().catch(() => undefined);
      this.client = this.newClient();
    }
    this.start();
  }

  stop(): void {
    this.stopTimer();
    if (this.client instanceof Client) void this.client.destroy().catch(() => undefined);
  }

  private newClient(): Client | TargetConnection {
    const protocol = this.protocol === undefined ? {} : { protocol: this.protocol };
    const c = targetConnection(this.guard, this.tenant, this.target, { connectMs: this.check.timeoutMs, ...(this.tls ? { tls: this.tls } : {}), ...protocol });
    this.servername = c.servername;
    if (this.protocol !== undefined) return c;
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
      const status = this.client instanceof Client ? await this.probeH1(this.client, host) : await probeH2(this.client, this.target, this.check.path, host, this.check.timeoutMs);
      why = `status ${status}`;
      this.record(this.expected(status), why);
    } catch (err) {
      // A failed handshake says why (Node's code and message), as the workers' log line does.
      why = err instanceof UpstreamTlsError ? err.message : ((err as { code?: string }).code ?? (err as Error).message);
      this.record(false, why);
    } finally {
      this.running = false;
      this.lastCheckedAt = Date.now();
    }
  }

  private async probeH1(client: Client, host: string): Promise<number> {
    const sni = this.servername === undefined ? {} : { servername: this.servername };
    const r = await client.request({ method: 'GET', path: this.check.path, headers: { host, 'user-agent': 'switchyard-health-check' }, ...sni } as Parameters<Client['request']>[0]);
    await r.body.dump({ limit: 64 * 1024 });
    return r.statusCode;
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
