/** Prometheus text format 0.0.4, written by hand: a family's HELP and TYPE once, then its samples. */

export type Labels = Record<string, string | number>;

/** A label value as the format wants it: backslash, double quote and line feed escaped. */
function escapeValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v;
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeValue(String(v))}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

export class Exposition {
  private readonly lines: string[] = [];

  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, labels: Labels, value: number): this {
    this.lines.push(`${name}${labelText(labels)} ${formatNumber(value)}`);
    return this;
  }

  /** A histogram's samples from per-bucket counts (not cumulative; the last is +Inf). */
  histogram(name: string, labels: Labels, bounds: readonly number[], buckets: readonly number[], sum: number): this {
    let cumulative = 0;
    for (let i = 0; i < buckets.length; i++) {
      cumulative += buckets[i]!;
      this.sample(`${name}_bucket`, { ...labels, le: i < bounds.length ? String(bounds[i]) : '+Inf' }, cumulative);
    }
    this.sample(`${name}_sum`, labels, sum);
    return this.sample(`${name}_count`, labels, cumulative);
  }

  text(): string {
    return this.lines.join('\n') + '\n';
  }
}

function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  if (Number.isNaN(n)) return 'NaN';
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : '-Inf';
}
