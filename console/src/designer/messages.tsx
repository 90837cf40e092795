/**
 * The line under the toolbar: "Saved", a refused edit's explanation (a live region),
 * and the server's error with its field paths.
 */
import type { ServerError } from './chain-io';

export function Messages({ saved, notice, error }: { saved: boolean; notice: string | null; error: ServerError | null }) {
  return (
    <>
      <div className="sy-messages" role="status" data-testid="designer-status">
        {saved && (
          <span className="sy-ok" data-testid="designer-saved">
            Saved
          </span>
        )}
        {notice && (
          <span className="sy-notice" data-testid="designer-notice">
            {notice}
          </span>
        )}
      </div>
      {error && (
        <div className="sy-error" role="alert" data-testid="designer-error">
          <strong>{error.code}</strong>: {error.message}
          {error.errors.length > 0 && (
            <ul>
              {error.errors.map((e, i) => (
                <li key={i}>
                  <code>{e.path || '/'}</code>: {e.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </>
  );
}
