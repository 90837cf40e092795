import assert from 'node:assert/strict';
import type { Gateway, KeySpec } from './gateway.js';
import { request, type HttpResult } from './http.js';
import { waitFor } from './wait.js';
import type { Kind } from '../../src/contracts/entities.js';
import type { CompileIssue } from '../../src/contracts/generation.js';
import type { EntityView as StoredEntityView } from '../../src/store/entity-repo.js';
import type { Json } from './json.js';

export type { Kind, CompileIssue };

/**
 * Typed calls of the admin contract, made with the gateway's root key (a key with id
 * `root`, see ROOT_KEY). The plain functions return the raw HttpResult; the `must*`
 * ones assert a 200 and return the parsed body.
 */

/** A `*` system key; pass `keys: [ROOT_KEY]` to startGateway. */
export const ROOT_KEY: KeySpec = { id: 'root', scopes: ['*'] };

export interface Receipt {
  logicalAddress: string;
  generation: number;
}

/** `config get`: the stored view plus the entity's logical address (docs typed loosely for assertions). */
export type EntityView = Omit<StoredEntityView, 'draft' | 'published'> & {
  draft: { doc: Json; updatedAt: string } | null;
  published: { doc: Json; generation: number } | null;
  logicalAddress: string;
};

export interface DryRunBody {
  success: boolean;
  candidateGeneration: number;
  issues: CompileIssue[];
  warnings: CompileIssue[];
  planned: string[];
  code?: string;
  message?: string;
  traceId?: string;
}

export interface PublishBody {
  ok: boolean;
  generation: number;
  planned: string[];
  warnings?: CompileIssue[];
}

export interface WorkerStatus {
  slot: number;
  pid: number | null;
  state: string;
  generation: number;
  restarts: number;
  startedAt: string | null;
}

export interface ClusterStatus {
  supervisor: { pid: number };
  generation: number;
  volume: string;
  workers: WorkerStatus[];
}

function rootToken(gw: Gateway): string {
  const token = gw.tokens.root;
  if (!token) throw new Error('the gateway has no `root` key: start it with keys: [ROOT_KEY]');
  return token;
}

const api = (gw: Gateway, tenant: string, rest: string) => `${gw.adminUrl}/api/v1/${encodeURIComponent(tenant)}/${rest}`;

function must<T>(r: HttpResult, what: string): T {
  assert.equal(r.status, 200, `${what}: status ${r.status}, body ${r.text}`);
  return r.json as T;
}

export function setEntityRaw(gw: Gateway, kind: Kind, name: string, doc: unknown, tenant = 'default'): Promise<HttpResult> {
  return request(api(gw, tenant, `config/set/${kind}/${encodeURIComponent(name)}`), { method: 'POST', token: rootToken(gw), body: doc });
}

export async function setEntity(gw: Gateway, kind: Kind, name: string, doc: unknown, tenant = 'default'): Promise<Receipt> {
  return must<Receipt>(await setEntityRaw(gw, kind, name, doc, tenant), `config set ${kind}/${name}`);
}

export function getEntityRaw(gw: Gateway, kind: Kind, name: string, tenant = 'default'): Promise<HttpResult> {
  return request(api(gw, tenant, `config/get/${kind}/${encodeURIComponent(name)}`), { token: rootToken(gw) });
}

export async function getEntity(gw: Gateway, kind: Kind, name: string, tenant = 'default'): Promise<EntityView> {
  return must<EntityView>(await getEntityRaw(gw, kind, name, tenant), `config get ${kind}/${name}`);
}

export async function listEntities(
  gw: Gateway,
  kind: Kind,
  tenant = 'default',
): Promise<{ tenant: string; kind: Kind; items: { name: string; state: string; pending: string | null; publishedGeneration: number | null; logicalAddress: string }[] }> {
  return must(await request(api(gw, tenant, `config/list/${kind}`), { token: rootToken(gw) }), `config list ${kind}`);
}

export function deleteEntityRaw(gw: Gateway, kind: Kind, name: string, tenant = 'default'): Promise<HttpResult> {
  return request(api(gw, tenant, `config/delete/${kind}/${encodeURIComponent(name)}`), { method: 'POST', token: rootToken(gw) });
}

export async function deleteEntity(gw: Gateway, kind: Kind, name: string, tenant = 'default'): Promise<Json> {
  return must(await deleteEntityRaw(gw, kind, name, tenant), `config delete ${kind}/${name}`);
}

export type DryRunResult = Omit<HttpResult, 'json'> & { json: DryRunBody };

/** `publish dry-run`; the status (200 or 422) is the caller's to check. */
export async function dryRun(gw: Gateway, tenant = 'default'): Promise<DryRunResult> {
  return (await request(api(gw, tenant, 'publish/dry-run'), { method: 'POST', token: rootToken(gw) })) as DryRunResult;
}

export function publishRaw(gw: Gateway, tenant = 'default', timeoutMs = 20_000): Promise<HttpResult> {
  return request(api(gw, tenant, 'publish/go'), { method: 'POST', token: rootToken(gw), timeoutMs });
}

/** `publish go`, asserting 200 {ok:true}. */
export async function publish(gw: Gateway, tenant = 'default'): Promise<PublishBody> {
  const body = must<PublishBody>(await publishRaw(gw, tenant), 'publish go');
  assert.equal(body.ok, true, `publish go: ${JSON.stringify(body)}`);
  return body;
}

export async function history(
  gw: Gateway,
  tenant = 'default',
): Promise<{ tenant: string; current: number; items: { generation: number; tenant: string; action: string; planned: string[]; createdAt: string }[] }> {
  return must(await request(api(gw, tenant, 'publish/history'), { token: rootToken(gw) }), 'publish history');
}

export function rollbackRaw(gw: Gateway, generation: number, tenant = 'default'): Promise<HttpResult> {
  return request(api(gw, tenant, `publish/rollback/${generation}`), { method: 'POST', token: rootToken(gw), timeoutMs: 20_000 });
}

export async function rollback(gw: Gateway, generation: number, tenant = 'default'): Promise<PublishBody> {
  return must<PublishBody>(await rollbackRaw(gw, generation, tenant), `publish rollback ${generation}`);
}

export async function clusterStatus(gw: Gateway): Promise<ClusterStatus> {
  return must<ClusterStatus>(await request(`${gw.adminUrl}/api/v1/sys/cluster/status`, { token: rootToken(gw) }), 'cluster status');
}

/** Writes every entity as a draft, then publishes; returns the publish body. */
export async function apply(gw: Gateway, entities: [Kind, string, unknown][], tenant = 'default'): Promise<PublishBody> {
  for (const [kind, name, doc] of entities) await setEntity(gw, kind, name, doc, tenant);
  return publish(gw, tenant);
}

/** Polls cluster status until every worker is listening at `generation`. */
export function waitForWorkersAt(gw: Gateway, generation: number, timeoutMs = 10_000): Promise<ClusterStatus> {
  return waitFor(
    `every worker listening at generation ${generation}`,
    async () => {
      const s = await clusterStatus(gw);
      return s.workers.length > 0 && s.workers.every((w) => w.state === 'listening' && w.generation === generation) ? s : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
