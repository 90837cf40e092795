/**
 * A form generated from a step's settings JSON Schema. Object properties become fields
 * (see schema-fields.tsx), nested objects fieldsets; settings the schema does not know
 * are kept and shown as JSON. Server messages arrive as JSON pointers relative to the
 * settings object and are shown next to the field they concern.
 */
import { useId } from 'react';
import { fieldFor, JsonField } from './schema-fields';
import { classify, isFieldObject } from './schema-util';
import type { JsonSchema } from '../api';

export interface FormError {
  pointer: string;
  message: string;
}

export interface SchemaFormProps {
  schema: unknown;
  value: Record<string, unknown> | undefined;
  onChange: (value: Record<string, unknown>) => void;
  errors?: FormError[];
  /** Values to suggest for top-level text properties (e.g. chain names for `ref`). */
  suggestions?: Record<string, string[]>;
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');

/** The first segment of a pointer, and the rest. */
function head(pointer: string): [string, string] {
  const m = /^\/([^/]*)(.*)$/.exec(pointer);
  if (!m) return ['', pointer];
  return [m[1]!.replace(/~1/g, '/').replace(/~0/g, '~'), m[2]!];
}

function without(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _gone, ...rest } = value;
  return rest;
}

interface ObjectProps {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  errors: FormError[];
  path: string[];
  idBase: string;
  suggestions?: Record<string, string[]>;
}

function ObjectFields({ schema, value, onChange, errors, path, idBase, suggestions }: ObjectProps) {
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  const required = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
  const keys = Object.keys(properties);
  const extra = Object.keys(value).filter((k) => !(k in properties));
  const set = (key: string, v: unknown) => onChange(v === undefined ? without(value, key) : { ...value, [key]: v });
  const errorsOf = (key: string) => errors.filter((e) => head(e.pointer)[0] === key);
  const unplaced = errors.filter((e) => {
    const [k] = head(e.pointer);
    return !(k in properties) && !(k in value);
  });

  const render = (key: string, schemaOf: JsonSchema | undefined) => {
    const at = [...path, key];
    const id = `${idBase}-${at.map(safe).join('-')}`;
    const testId = `setting-${at.join('.')}`;
    const mine = errorsOf(key);
    if (isFieldObject(schemaOf)) {
      const sub = value[key];
      const subValue = typeof sub === 'object' && sub !== null && !Array.isArray(sub) ? (sub as Record<string, unknown>) : {};
      const own = mine.filter((e) => head(e.pointer)[1] === '');
      return (
        <fieldset key={key} className="sy-fieldset" data-testid={testId} aria-describedby={own.length ? `${id}-err` : undefined}>
          <legend>
            {key}
            {required.has(key) && (
              <span className="sy-req" aria-hidden="true" title="required">
                {' '}*
              </span>
            )}
          </legend>
          {own.length > 0 && (
            <div id={`${id}-err`} className="sy-field-error" data-testid={`${testId}-error`}>
              {own.map((e, i) => (
                <div key={i}>{e.message}</div>
              ))}
            </div>
          )}
          <ObjectFields
            schema={schemaOf}
            value={subValue}
            onChange={(v) => set(key, Object.keys(v).length ? v : undefined)}
            errors={mine.filter((e) => head(e.pointer)[1] !== '').map((e) => ({ ...e, pointer: head(e.pointer)[1] }))}
            path={at}
            idBase={idBase}
          />
        </fieldset>
      );
    }
    const kind = schemaOf === undefined ? 'json' : classify(schemaOf);
    const Field = fieldFor(kind);
    return (
      <Field
        key={key}
        id={id}
        label={key}
        testId={testId}
        schema={schemaOf ?? {}}
        kind={kind}
        value={value[key]}
        required={required.has(key)}
        errors={mine.map((e) => e.message)}
        onChange={(v) => set(key, v)}
        suggestions={path.length === 0 ? suggestions?.[key] : undefined}
      />
    );
  };

  return (
    <>
      {unplaced.length > 0 && (
        <div className="sy-field-error" data-testid={`setting-${path.length ? path.join('.') + '.' : ''}errors`}>
          {unplaced.map((e, i) => (
            <div key={i}>
              {e.pointer ? `${e.pointer}: ` : ''}
              {e.message}
            </div>
          ))}
        </div>
      )}
      {keys.map((k) => render(k, properties[k]))}
      {extra.length > 0 && (
        <div className="sy-extra">
          <div className="sy-hint">Settings this step does not describe (kept as they are):</div>
          {extra.map((k) => render(k, undefined))}
        </div>
      )}
    </>
  );
}

export function SchemaForm({ schema, value, onChange, errors = [], suggestions }: SchemaFormProps) {
  const idBase = `sf${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const current = value ?? {};
  if (isFieldObject(schema)) {
    if (!Object.keys((schema as JsonSchema).properties ?? {}).length && !Object.keys(current).length) {
      return <p className="sy-hint">This step has no settings.</p>;
    }
    return (
      <div className="sy-schema-form">
        <ObjectFields schema={schema as JsonSchema} value={current} onChange={onChange} errors={errors} path={[]} idBase={idBase} suggestions={suggestions} />
      </div>
    );
  }
  // No usable schema (unknown step): the whole settings object as JSON.
  return (
    <div className="sy-schema-form">
      <JsonField
        id={`${idBase}-settings`}
        label="settings (JSON)"
        testId="settings-json"
        schema={{}}
        kind="json"
        value={value}
        required={false}
        errors={errors.map((e) => (e.pointer ? `${e.pointer}: ${e.message}` : e.message))}
        onChange={(v) => onChange(typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {})}
      />
    </div>
  );
}
