import type { StepDefinition, StepEnv, SubRequestInit, SubResponse } from './step.js';
import { declaredAnswer } from '../steps/reply.js';
import { canonical } from '../compiler/snapshot.js';

/** What a fake cluster is asked: the step's request as the cluster's targets would get it. */
export interface FakeRequest {
  method: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
}

/** A fake cluster's answer; an object body is sent as JSON. Default status 200. */
export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
}

export type FakeCluster = (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

export interface ClusterCall {
  cluster: string;
  request: FakeRequest;
}

/**
 * Per-route state kept across builds, as the gateway keeps it across publishes: one value
 * per route, step and settings (changed settings get a fresh one). Pass the same store to
 * several testers to see a rebuild keep (or lose) its state.
 */
export class TestStates {
  readonly values = new Map<string, unknown>();

  static key(route: string, code: string, settings: unknown): string {
    return `${route}#${code}@${canonical(settings)}`;
  }
}

export interface TestEnvOptions {
  tenant: string;
  route: string;
  secrets: Record<string, string | undefined>;
  clusters: Record<string, FakeCluster>;
  states: TestStates;
}

/** What a test reads back from the env its step was built with. */
export interface TestEnvRecord {
  readonly logs: LogLine[];
  readonly calls: ClusterCall[];
  readonly stateKey: string;
}

/**
 * The public StepEnv a tester builds a step with: declared secrets from a map, declared
 * clusters answered by fakes, captured log lines, and answers as the gateway builds them.
 */
export function testEnv<S>(def: StepDefinition<S>, settings: S, o: TestEnvOptions): { env: StepEnv; record: TestEnvRecord } {
  const record: TestEnvRecord = { logs: [], calls: [], stateKey: TestStates.key(o.route, def.code, settings) };
  const secrets = new Set((def.secrets?.(settings) ?? []).map((s) => s.name));
  const clusters = new Set((def.clusters?.(settings) ?? []).map((c) => c.name));
  const answers = new Map(def.answers.map((a) => [a.code, a]));
  const line = (level: LogLine['level']) => (obj: object, msg: string) => void record.logs.push({ level, obj, msg });
  const env: StepEnv = {
    tenant: o.tenant,
    route: o.route,
    log: { info: line('info'), warn: line('warn'), error: line('error') },
    state<T>(make: () => T): T {
      if (!o.states.values.has(record.stateKey)) o.states.values.set(record.stateKey, make());
      return o.states.values.get(record.stateKey) as T;
    },
    secret(name: string): string | undefined {
      if (!secrets.has(name)) throw new Error(`${def.code}: secret ${name} is not one its secrets(settings) declares`);
      return o.secrets[name];
    },
    async request(cluster: string, init: SubRequestInit): Promise<SubResponse> {
      if (!clusters.has(cluster)) throw new Error(`${def.code}: cluster ${cluster} is not one its clusters(settings) declares`);
      const fake = o.clusters[cluster];
      if (!fake) throw new Error(`${def.code}: no fake for cluster ${cluster} (stepTester's clusters option)`);
      const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const request: FakeRequest = { method: (init.method ?? 'GET').toUpperCase(), path: init.path, headers, body: Buffer.from(init.body ?? '') };
      record.calls.push({ cluster, request });
      return subResponse(await fake(request));
    },
    answer(code: string, message?: string, headers?: Record<string, string>) {
      const spec = answers.get(code);
      if (!spec) throw new Error(`${def.code}: answer ${code} is not declared in its answers`);
      return declaredAnswer(spec.status, code, message ?? spec.when, headers);
    },
  };
  return { env, record };
}

function subResponse(r: FakeResponse): SubResponse {
  const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const json = r.body !== undefined && typeof r.body === 'object' && !Buffer.isBuffer(r.body);
  if (json) headers['content-type'] ??= 'application/json';
  const body = r.body === undefined ? Buffer.alloc(0) : json ? Buffer.from(JSON.stringify(r.body)) : Buffer.from(r.body as string | Buffer);
  return { status: r.status ?? 200, headers, body };
}
