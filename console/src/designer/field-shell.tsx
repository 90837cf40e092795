/**
 * What every settings field shares: the label (with a required mark), the hint, the
 * messages next to the input and the aria attributes tying them together, and the
 * draft text a user is typing.
 */
import { useState, type ReactNode } from 'react';
import type { JsonSchema } from '../api';
import { hintOf, sameJson, type FieldKind, type Parsed } from './schema-util';

export interface FieldProps {
  id: string;
  label: string;
  testId: string;
  schema: JsonSchema;
  kind: FieldKind;
  value: unknown;
  required: boolean;
  errors: string[];
  onChange: (value: unknown) => void;
  suggestions?: string[];
}

export function Shell(props: FieldProps & { localError?: string; children: ReactNode; inline?: boolean }) {
  const { id, label, required, errors, localError, children, schema, kind, testId } = props;
  const hint = hintOf(schema, kind);
  const messages = [...(localError ? [localError] : []), ...errors];
  return (
    <div className={`sy-field${props.inline ? ' sy-field-inline' : ''}${messages.length ? ' sy-field-invalid' : ''}`}>
      <label htmlFor={id}>
        {label}
        {required && (
          <span className="sy-req" aria-hidden="true" title="required">
            {' '}*
          </span>
        )}
      </label>
      {children}
      {hint && (
        <div id={`${id}-hint`} className="sy-hint">
          {hint}
        </div>
      )}
      {messages.length > 0 && (
        <div id={`${id}-err`} className="sy-field-error" data-testid={`${testId}-error`}>
          {messages.map((m, i) => (
            <div key={i}>{m}</div>
          ))}
        </div>
      )}
    </div>
  );
}

/** aria attributes tying an input to its hint and messages. */
export function aria(p: FieldProps, localError?: string) {
  const invalid = !!localError || p.errors.length > 0;
  const ids = [hintOf(p.schema, p.kind) ? `${p.id}-hint` : '', invalid ? `${p.id}-err` : ''].filter(Boolean).join(' ');
  return {
    id: p.id,
    'data-testid': p.testId,
    'aria-describedby': ids || undefined,
    'aria-invalid': invalid || undefined,
    'aria-required': p.required || undefined,
  };
}

/** Text typed by the user, kept while it still means the current value. */
export function useDraft(value: unknown, format: (v: unknown) => string, parse: (t: string) => Parsed) {
  const [text, setText] = useState(() => format(value));
  const [seen, setSeen] = useState<unknown>(value);
  if (seen !== value) {
    setSeen(value);
    if (!sameJson(parse(text).value, value)) setText(format(value));
  }
  const parsed = parse(text);
  return { text, setText, parsed, error: parsed.ok ? undefined : parsed.error };
}

