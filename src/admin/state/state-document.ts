import { NAME_PATTERN, parseDocument, pointerToken as escape, type FieldError } from '../../compiler/documents.js';
import { KINDS, type Kind } from '../../contracts/entities.js';
import { WRITE_ONLY } from '../cert-at-rest.js';
import { runAll } from '../../shared/cpu-slices.js';

/** A tenant's configuration as one document: what `export` writes and `diff` and `sync` read. */
export const STATE_VERSION = 1;

/** The document's sections, a map of name to entity document each. */
export const SECTIONS: Record<Kind, string> = { cluster: 'clusters', route: 'routes', orch: 'orchs', cert: 'certs' };

const FIELDS = new Set(['version', 'tenant', ...Object.values(SECTIONS)]);

/** `cert/api`-style key of an entity in a state. */
export const entityKey = (kind: Kind, name: string): string => `${kind}/${name}`;

export interface StateEntity {
  kind: Kind;
  name: string;
  doc: Record<string, unknown>;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a state document for `tenant`: its fields, version and tenant, every name, and
 * every entity against its kind's schema. Errors carry JSON pointers into the document
 * (`/routes/api/pathPrefix`). A cert's `privateKey` may be "(write-only)": the stored key
 * is kept (the caller checks one exists).
 */
export function parseState(body: unknown, tenant: string): ParsedState {
  return runAll(parseStateSteps(body, tenant));
}

export type ParsedState = { ok: true; entities: StateEntity[] } | { ok: false; errors: FieldError[] };

/** parseState as steps, one entity each: a large document is checked in slices (runSliced). */
export function* parseStateSteps(body: unknown, tenant: string): Generator<void, ParsedState> {
  if (!isObject(body)) return { ok: false, errors: [{ path: '', message: 'a state document must be a JSON (or YAML) object' }] };
  const errors: FieldError[] = [];
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) errors.push({ path: `/${escape(k)}`, message: 'unknown field' });
  if (body.version !== STATE_VERSION) errors.push({ path: '/version', message: `must be ${STATE_VERSION}` });
  if (body.tenant !== undefined && body.tenant !== tenant) {
    errors.push({ path: '/tenant', message: `this document is tenant ${JSON.stringify(body.tenant)}'s; the call is for tenant ${tenant}` });
  }
  const entities: StateEntity[] = [];
  for (const kind of KINDS) {
    const section = body[SECTIONS[kind]];
    if (section === undefined) continue;
    const at = `/${SECTIONS[kind]}`;
    if (!isObject(section)) {
      errors.push({ path: at, message: 'must be an object of name to document' });
      continue;
    }
    for (const [name, doc] of Object.entries(section)) {
      const where = `${at}/${escape(name)}`;
      if (!NAME_PATTERN.test(name)) {
        errors.push({ path: where, message: 'invalid name: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit' });
        continue;
      }
      const keepsKey = kind === 'cert' && isObject(doc) && doc.privateKey === WRITE_ONLY;
      // A kept key is checked as the store has it: any sealed value passes the schema.
      const parsed = parseDocument(kind, keepsKey ? { ...doc, privateKey: 'sy1.kept' } : doc);
      if (!parsed.ok) errors.push(...parsed.errors.map((e) => ({ path: where + e.path, message: e.message })));
      else entities.push({ kind, name, doc: doc as Record<string, unknown> });
      yield;
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, entities };
}

/** A value with every object's keys sorted: the same state always serialises to the same bytes. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical(value[k])]),
  );
}

/** The state document of `entities`: every section present, names sorted, keys sorted. */
export function stateDocument(tenant: string, entities: readonly StateEntity[]): Record<string, unknown> {
  const out: Record<string, unknown> = { version: STATE_VERSION, tenant };
  for (const kind of KINDS) {
    const docs = entities.filter((e) => e.kind === kind).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    out[SECTIONS[kind]] = Object.fromEntries(docs.map((e) => [e.name, canonical(e.doc)]));
  }
  return out;
}
