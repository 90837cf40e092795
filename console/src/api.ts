import { getToken, usesProviderSession } from './session';
import { CONSOLE_ERRORS } from '../../src/shared/client-codes';

/** An admin error as the server sent it ({code, message, traceId, …}), with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { code?: string; message?: string; [k: string]: unknown },
  ) {
    super(body.message ?? `HTTP ${status}`);
  }
  get code(): string {
    return this.body.code ?? 'Unknown';
  }
}

let unauthorized: ((e: ApiError) => void) | null = null;

/**
 * Who hears that the server refused the session's token (401) on any call: the shell,
 * which signs out. A token revoked or expired mid-session otherwise left every control
 * of the console live. Returns the unsubscribe.
 */
export function onUnauthorized(fn: (e: ApiError) => void): () => void {
  unauthorized = fn;
  return () => {
    if (unauthorized === fn) unauthorized = null;
  };
}

/**
 * One admin call with the tab's bearer token, or else its console session cookie (sent by
 * the browser). Every call names itself the console's: the server accepts the cookie only
 * with this header, which a page of another site cannot send. Non-2xx answers throw ApiError.
 */
export async function api<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'x-switchyard-console': '1' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    // The browser says only "Failed to fetch": say what it means here, in the envelope's shape.
    throw new ApiError(0, { code: 'Console.Unreachable', message: CONSOLE_ERRORS['Console.Unreachable'].message });
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { message: text };
  }
  if (!res.ok) {
    const err = new ApiError(res.status, (parsed ?? {}) as ConstructorParameters<typeof ApiError>[1]);
    if (res.status === 401 && (token || usesProviderSession())) unauthorized?.(err);
    throw err;
  }
  return parsed as T;
}

export const seg = (s: string) => encodeURIComponent(s);

/** Tenant-scoped path: /api/v1/{tenant}/… */
export const tpath = (tenant: string, rest: string) => `/api/v1/${seg(tenant)}/${rest}`;

export type Kind = 'cluster' | 'route' | 'orch';

export interface EntityListItem {
  name: string;
  state: string;
  pending: string | null;
  publishedGeneration: number | null;
  logicalAddress: string;
}

export interface EntityView {
  kind: Kind;
  name: string;
  state: string;
  draft: { doc: EntityDoc; updatedAt: string } | null;
  published: { doc: EntityDoc; generation: number } | null;
  /** 'delete': a removal is staged for the next publish (a draft saved now cancels it). */
  pending?: string | null;
  logicalAddress?: string;
}

/** What a certificate says, read by the server from its PEM (`info` of a cert in `config get`). */
export type { CertInfo } from '../../src/contracts/certs';
import type { CertInfo } from '../../src/contracts/certs';

/** A cert document as `config get` shows it: the key is always "(write-only)"; `info` is null for an unreadable PEM. */
export interface CertDocView {
  certificate: string;
  privateKey: string;
  hosts?: string[];
  default?: boolean;
  info: CertInfo | null;
}

export interface CertView {
  name: string;
  state: string;
  pending?: string | null;
  draft: { doc: CertDocView; updatedAt: string } | null;
  published: { doc: CertDocView; generation: number } | null;
}

/** The compiler's issue shape, shared with the server (a type only: nothing of src/ is bundled). */
export type { CompileIssue } from '../../src/contracts/generation';
import type { CompileIssue } from '../../src/contracts/generation';

export interface DryRun {
  success: boolean;
  candidateGeneration: number;
  issues: CompileIssue[];
  /** Same shape as issues; they stop nothing. */
  warnings: CompileIssue[];
  planned: string[];
}

export interface StepInfo {
  code: string;
  summary: string;
  enabled: boolean;
  /** JSON Schema of the step's settings. */
  settingsSchema: JsonSchema;
  /** A step from a step package (worker.json steps.packages): its package and version. */
  package?: string;
  version?: string;
}

/** A stored document as the admin API returns it: its shape depends on the kind (checked server-side). */
export type EntityDoc = Record<string, unknown>;

/** The parts of a step's settings JSON Schema the console reads; other keywords pass through. */
export interface JsonSchema {
  type?: string;
  enum?: unknown[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  description?: string;
  default?: unknown;
  format?: string;
  pattern?: string;
  minItems?: number;
  [keyword: string]: unknown;
}
