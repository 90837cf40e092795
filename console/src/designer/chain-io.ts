/**
 * The designer's admin calls: the palette, the chain (draft, else published, else a new
 * empty one), other chain names, writing the draft, and the tenant's dry-run.
 */
import { api, ApiError, seg, tpath, type CompileIssue, type DryRun, type EntityView, type StepInfo } from '../api';

/** `removal-staged`: the published chain, with a delete staged for the next publish. */
export type ChainSource = 'draft' | 'published' | 'removal-staged' | 'new';

export async function loadSteps(tenant: string): Promise<StepInfo[]> {
  const r = await api<{ items: StepInfo[] }>('GET', tpath(tenant, 'plugin/list'));
  return Array.isArray(r?.items) ? r.items : [];
}

export async function loadChain(tenant: string, name: string): Promise<{ doc: unknown; source: ChainSource }> {
  try {
    const e = await api<EntityView>('GET', tpath(tenant, `config/get/orch/${seg(name)}`));
    if (e.draft?.doc) return { doc: e.draft.doc, source: 'draft' };
    if (e.published?.doc) return { doc: e.published.doc, source: e.pending === 'delete' ? 'removal-staged' : 'published' };
    return { doc: null, source: 'new' };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.code === 'Svc.Config.NotFound')) return { doc: null, source: 'new' };
    throw err;
  }
}

/** Names of the tenant's other chains (suggested for `orch` nodes); empty when not readable. */
export async function loadChainNames(tenant: string, except: string): Promise<string[]> {
  try {
    const r = await api<{ items: { name: string }[] }>('GET', tpath(tenant, 'config/list/orch'));
    return (r?.items ?? []).map((i) => i.name).filter((n) => n !== except);
  } catch {
    return [];
  }
}

export interface ServerError {
  status: number;
  code: string;
  message: string;
  errors: { path: string; message: string }[];
}

export function asServerError(err: unknown): ServerError {
  if (err instanceof ApiError) {
    const errors = Array.isArray(err.body.errors)
      ? (err.body.errors as ({ path?: unknown; message?: unknown } | null)[]).map((e) => ({ path: String(e?.path ?? ''), message: String(e?.message ?? '') }))
      : [];
    return { status: err.status, code: err.code, message: err.body.message ?? err.message, errors };
  }
  return { status: 0, code: 'Network', message: err instanceof Error ? err.message : String(err), errors: [] };
}

export async function saveChain(tenant: string, name: string, doc: unknown): Promise<{ generation?: number }> {
  return api<{ generation?: number }>('POST', tpath(tenant, `config/set/orch/${seg(name)}`), doc);
}

export interface DryRunResult {
  success: boolean;
  candidateGeneration?: number;
  issues: CompileIssue[];
}

/** The tenant's dry-run; a 422 carries the same fields as a pass, with the issues. */
export async function dryRun(tenant: string): Promise<DryRunResult> {
  try {
    const r = await api<DryRun>('POST', tpath(tenant, 'publish/dry-run'));
    return { success: r.success !== false, candidateGeneration: r.candidateGeneration, issues: r.issues ?? [] };
  } catch (err) {
    if (err instanceof ApiError && Array.isArray(err.body.issues)) {
      const b = err.body as unknown as Partial<DryRun>;
      return { success: false, candidateGeneration: b.candidateGeneration, issues: b.issues ?? [] };
    }
    throw err;
  }
}
