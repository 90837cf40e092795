import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from './api';

/** An admin error as the server put it: code, message, and field errors when present. */
export function ErrorBox({ error, testId = 'error' }: { error: unknown; testId?: string }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  const fieldErrors = (e?.body.errors as { path: string; message: string }[] | undefined) ?? [];
  return (
    <div className="error" role="alert" data-testid={testId}>
      <strong>{e ? e.code : 'Error'}</strong>: {error instanceof Error ? error.message : String(error)}
      {fieldErrors.length > 0 && (
        <ul>
          {fieldErrors.map((f, i) => (
            <li key={i}>
              <code>{f.path || '/'}</code> {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Loads once (and again when `deps` change or reload() is called). An error stays until
 * the next answer replaces it, so a view that reloads on a timer does not blink.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
    // The caller lists what `load` depends on (deps); `load` itself is a new closure each render.
  }, [...deps, n]);
  return { data, error, reload: () => setN((x) => x + 1) };
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="panel">
      <header className="panel-head">
        <h2>{title}</h2>
        <div className="actions">{actions}</div>
      </header>
      {children}
    </section>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A data table: the header row from `head` ('' for an unlabelled column), the rows as children. */
export function Table({ head, children, ...rest }: { head: string[]; children: ReactNode; 'data-testid'?: string }) {
  return (
    <table {...rest}>
      <thead>
        <tr>
          {head.map((h, i) => (
            <th key={i}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
