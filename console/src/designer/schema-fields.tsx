/**
 * The widgets of the generated settings form, one per kind of property. Each has a
 * <label htmlFor>, a hint (type, bounds, default), and shows the server's messages for
 * its property next to it. `onChange(undefined)` removes the property.
 */
import type { ReactNode } from 'react';
import { aria, Shell, useDraft, type FieldProps } from './field-shell';
import { formatJson, formatList, parseJson, parseList, parseNumber, placeholderOf, sameJson, type FieldKind } from './schema-util';

export type { FieldProps } from './field-shell';

export function TextField(p: FieldProps) {
  const text = typeof p.value === 'string' ? p.value : p.value === undefined || p.value === null ? '' : String(p.value);
  const listId = p.suggestions?.length ? `${p.id}-list` : undefined;
  return (
    <Shell {...p}>
      <input
        type="text"
        {...aria(p)}
        value={text}
        list={listId}
        placeholder={placeholderOf(p.schema, p.kind)}
        onChange={(e) => p.onChange(e.target.value === '' ? undefined : e.target.value)}
      />
      {listId && (
        <datalist id={listId}>
          {p.suggestions!.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      )}
    </Shell>
  );
}

export function NumberField(p: FieldProps) {
  const integer = p.kind === 'integer';
  const d = useDraft(p.value, (v) => (v === undefined ? '' : String(v)), (t) => parseNumber(t, integer));
  return (
    <Shell {...p} localError={d.error}>
      <input
        type="text"
        inputMode={integer ? 'numeric' : 'decimal'}
        {...aria(p, d.error)}
        value={d.text}
        placeholder={placeholderOf(p.schema, p.kind)}
        onChange={(e) => {
          d.setText(e.target.value);
          p.onChange(parseNumber(e.target.value, integer).value);
        }}
      />
    </Shell>
  );
}

export function EnumField(p: FieldProps) {
  const options: unknown[] = [...(p.schema.enum ?? [])];
  if (p.value !== undefined && !options.some((o) => sameJson(o, p.value))) options.push(p.value);
  const current = p.value === undefined ? '' : JSON.stringify(p.value);
  const def = p.schema.default;
  return (
    <Shell {...p}>
      <select
        {...aria(p)}
        value={current}
        onChange={(e) => p.onChange(e.target.value === '' ? undefined : JSON.parse(e.target.value))}
      >
        <option value="">{def !== undefined ? `(default: ${String(def)})` : '(not set)'}</option>
        {options.map((o) => (
          <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
            {String(o)}
          </option>
        ))}
      </select>
    </Shell>
  );
}

export function BooleanField(p: FieldProps) {
  const def = p.schema.default;
  const checked = typeof p.value === 'boolean' ? p.value : def === true;
  return (
    <Shell {...p} inline>
      <input type="checkbox" {...aria(p)} checked={checked} onChange={(e) => p.onChange(e.target.checked)} />
      {p.value !== undefined && (
        <button type="button" className="sy-link-button" onClick={() => p.onChange(undefined)} aria-label={`Reset ${p.label} to its default`}>
          reset
        </button>
      )}
    </Shell>
  );
}

export function ListField(p: FieldProps) {
  const itemType: string = p.schema.items?.type ?? 'string';
  const d = useDraft(p.value, formatList, (t) => parseList(t, itemType));
  return (
    <Shell {...p} localError={d.error}>
      <textarea
        rows={2}
        {...aria(p, d.error)}
        value={d.text}
        placeholder={placeholderOf(p.schema, p.kind)}
        onChange={(e) => {
          d.setText(e.target.value);
          p.onChange(parseList(e.target.value, itemType).value);
        }}
      />
    </Shell>
  );
}

/** Anything the form has no widget for: the value as JSON. */
export function JsonField(p: FieldProps) {
  const d = useDraft(p.value, formatJson, parseJson);
  return (
    <Shell {...p} localError={d.error}>
      <textarea
        rows={3}
        className="sy-json"
        spellCheck={false}
        {...aria(p, d.error)}
        value={d.text}
        placeholder={placeholderOf(p.schema, p.kind)}
        onChange={(e) => {
          d.setText(e.target.value);
          const r = parseJson(e.target.value);
          if (r.ok) p.onChange(r.value);
        }}
      />
    </Shell>
  );
}

export function fieldFor(kind: FieldKind): (p: FieldProps) => ReactNode {
  switch (kind) {
    case 'string':
      return TextField;
    case 'number':
    case 'integer':
      return NumberField;
    case 'enum':
      return EnumField;
    case 'boolean':
      return BooleanField;
    case 'list':
      return ListField;
    default:
      return JsonField;
  }
}
