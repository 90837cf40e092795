import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// The dashboard and the examples in docs/observability.md may only query what the page documents.
const doc = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as Dashboard;

interface Target {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
}
interface Dashboard {
  schemaVersion: number;
  title: string;
  uid: string;
  templating: { list: Variable[] };
  panels: Panel[];
}

interface Metric {
  type: string;
  labels: string[];
}

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['instance', 'job'];
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

/** The rows of the metric table under `## Metrics`: name, type, labels. */
function documentedMetrics(markdown: string): Map<string, Metric> {
  const start = markdown.indexOf('\n## Metrics\n');
  assert.ok(start >= 0, 'docs/observability.md has no "## Metrics" section');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const metrics = new Map<string, Metric>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(switchyard_[a-z0-9_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined || cells.length < 5) continue;
    const labels = [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    metrics.set(name, { type: cells[2]!, labels });
  }
  return metrics;
}

/** The documented metric a series name belongs to, and its labels as a series (`le` on buckets). */
function resolve(metrics: Map<string, Metric>, series: string): { name: string; labels: string[] } | null {
  const direct = metrics.get(series);
  if (direct) return { name: series, labels: direct.labels };
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!series.endsWith(suffix)) continue;
    const base = series.slice(0, -suffix.length);
    const m = metrics.get(base);
    if (m?.type === 'histogram') return { name: base, labels: suffix === '_bucket' ? [...m.labels, 'le'] : m.labels };
  }
  return null;
}

/** Problems of one PromQL expression: unknown series, labels a series does not have. */
function exprProblems(metrics: Map<string, Metric>, expr: string, legendFormat = ''): string[] {
  const problems: string[] = [];
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const known = new Set(TARGET_LABELS);
  const names = [...bare.matchAll(/\bswitchyard_[a-z0-9_]+/g)].map((m) => m[0]);
  if (names.length === 0) problems.push(`names no switchyard metric: ${expr}`);
  for (const series of names) {
    const r = resolve(metrics, series);
    if (r === null) problems.push(`${series} is not in the metric list`);
    else r.labels.forEach((l) => known.add(l));
  }
  for (const [, series, matchers] of bare.matchAll(/\b(switchyard_[a-z0-9_]+)\s*\{([^}]*)\}/g)) {
    const r = resolve(metrics, series!);
    if (r === null) continue;
    for (const [, label] of matchers!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
      if (!r.labels.includes(label!) && !TARGET_LABELS.includes(label!)) problems.push(`${series} has no label ${label}`);
    }
  }
  for (const [, list] of bare.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g)) {
    for (const label of list!.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!known.has(label)) problems.push(`grouping by ${label}, a label none of its metrics has`);
    }
  }
  for (const [, label] of legendFormat.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)) {
    if (!known.has(label!)) problems.push(`legend names ${label}, a label none of its metrics has`);
  }
  return problems;
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

const metrics = documentedMetrics(doc);
const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
const variableQuery = (v: Variable) => (typeof v.query === 'string' ? v.query : v.query.query);

test('the metric list of docs/observability.md is read (types and labels)', () => {
  assert.equal(metrics.get('switchyard_requests_total')?.type, 'counter');
  assert.deepEqual(metrics.get('switchyard_requests_total')?.labels, ['tenant', 'route', 'method', 'status_class']);
  assert.equal(metrics.get('switchyard_request_duration_seconds')?.type, 'histogram');
  for (const [name, m] of metrics) assert.match(m.type, /^(counter|gauge|histogram)$/, `${name}: type ${m.type}`);
});

test('the checker refuses an unknown metric, a label a metric lacks and a grouping by it', () => {
  assert.deepEqual(exprProblems(metrics, 'sum by (tenant) (rate(switchyard_requests_total[5m]))'), []);
  assert.notDeepEqual(exprProblems(metrics, 'rate(switchyard_request_total[5m])'), []);
  assert.notDeepEqual(exprProblems(metrics, 'rate(switchyard_requests_total{cluster="a/b"}[5m])'), []);
  assert.notDeepEqual(exprProblems(metrics, 'sum by (target) (rate(switchyard_requests_total[5m]))'), []);
  assert.notDeepEqual(exprProblems(metrics, 'rate(switchyard_requests_total_bucket[5m])'), []);
});

test('every series naming a tenant\'s entity (a route, a cluster) carries `tenant` apart from the entity\'s name, and the dashboard selects tenants by it', () => {
  const named = [...metrics].filter(([, m]) => m.labels.includes('route') || m.labels.includes('cluster'));
  assert.ok(named.some(([n]) => n === 'switchyard_upstream_duration_seconds'), 'the upstream series name their cluster');
  for (const [name, m] of named) assert.ok(m.labels.includes('tenant'), `${name}: ${m.labels.join(', ')}`);
  const exprs = allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  assert.deepEqual(exprs.filter((e) => e.includes('$tenant/')), [], 'no query reads the tenant out of another label\'s value');
});

test('every panel query of the dashboard names documented metrics and labels only', () => {
  const panels = allPanels(dashboard.panels).filter((p) => p.type !== 'row');
  assert.ok(panels.length >= 8, `only ${panels.length} panels`);
  const problems: string[] = [];
  for (const p of panels) {
    assert.ok(p.targets && p.targets.length > 0, `panel "${p.title}" has no query`);
    for (const t of p.targets) problems.push(...exprProblems(metrics, t.expr, t.legendFormat).map((m) => `panel "${p.title}" ${t.refId}: ${m}`));
  }
  assert.deepEqual(problems, []);
});

test('the dashboard queries the metrics its panels are meant to show', () => {
  const exprs = allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
  for (const name of [
    'switchyard_requests_total',
    'switchyard_request_duration_seconds_bucket',
    'switchyard_upstream_duration_seconds_bucket',
    'switchyard_upstream_errors_total',
    'switchyard_inflight_requests',
    'switchyard_connections',
    'switchyard_step_rejections_total',
  ]) {
    assert.ok(exprs.includes(name), `no panel queries ${name}`);
  }
});

test('template variables: a Prometheus data source, tenant and route from label_values; every $variable used exists', () => {
  const ds = variables.get('datasource');
  assert.equal(ds?.type, 'datasource');
  assert.equal(ds?.query, 'prometheus');
  for (const name of ['tenant', 'route']) {
    const v = variables.get(name);
    assert.equal(v?.type, 'query', `no query variable ${name}`);
    const q = variableQuery(v!);
    assert.match(q, new RegExp(`^label_values\\(.+,\\s*${name}\\)$`), `${name}: ${q}`);
    assert.deepEqual(exprProblems(metrics, q.replace(/^label_values\((.+),\s*\w+\)$/, '$1')), [], `${name}: ${q}`);
  }
  const used = JSON.stringify(dashboard).matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g);
  for (const [, name] of used) {
    if (!name!.startsWith('__')) assert.ok(variables.has(name!), `$${name} is used but no template variable`);
  }
});

test('every panel and query reads the chosen data source; panel ids are unique', () => {
  const panels = allPanels(dashboard.panels);
  assert.equal(new Set(panels.map((p) => p.id)).size, panels.length);
  for (const p of panels.filter((x) => x.type !== 'row')) {
    assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, `panel "${p.title}"`);
    for (const t of p.targets ?? []) assert.equal(t.datasource?.uid ?? '${datasource}', '${datasource}', `panel "${p.title}" ${t.refId}`);
  }
  assert.ok(dashboard.schemaVersion >= 36 && dashboard.uid.length > 0 && dashboard.title.length > 0);
});

test('every PromQL example in docs/observability.md names documented metrics and labels only', () => {
  const blocks = [...doc.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(blocks.length >= 4, `only ${blocks.length} promql examples`);
  const problems = blocks.flatMap((b) => exprProblems(metrics, b).map((m) => `${m} in: ${b.trim()}`));
  assert.deepEqual(problems, []);
});
