import { useState, type FormEvent } from 'react';
import { api, tpath } from '../api';
import { ErrorBox, Section } from '../components';
import { parseHeaders, type ExplainAnswer, type ExplainRequest } from './explain-answer';
import { ExplainResult } from './ExplainResult';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Which route a request would take and why (`explain`): a simulation, nothing is sent. The
 * form keeps its values after an answer, so a request can be tweaked and asked again.
 */
export function Explain({ tenant }: { tenant: string }) {
  const [method, setMethod] = useState('GET');
  const [url, setUrl] = useState('');
  const [headers, setHeaders] = useState('');
  const [client, setClient] = useState('');
  const [draft, setDraft] = useState(false);
  const [answer, setAnswer] = useState<ExplainAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setAnswer(null); // an answer left on screen while asking again would read as the new one
    setBusy(true);
    try {
      const body: ExplainRequest = { method, url: url.trim(), headers: parseHeaders(headers), ...(client.trim() ? { clientAddress: client.trim() } : {}), draft };
      setAnswer(await api<ExplainAnswer>('POST', tpath(tenant, 'explain'), body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title={`Explain a request for ${tenant}`}>
      <p className="hint">Which route the data port would choose, why the others lose, and the steps that would run. Nothing is sent anywhere.</p>
      <form onSubmit={submit} className="stack" aria-label="Explain a request">
        <label htmlFor="explain-method">Method</label>
        <select id="explain-method" value={method} onChange={(e) => setMethod(e.target.value)} data-testid="explain-method">
          {METHODS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
        <label htmlFor="explain-url">URL (its host is the Host header) or a path</label>
        <input
          id="explain-url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="http://api.example.com/v1/users?id=1 or /v1/users"
          required
          data-testid="explain-url"
        />
        <label htmlFor="explain-headers">Headers, one "name: value" a line (a Host here wins over the URL's)</label>
        <textarea id="explain-headers" className="json" rows={4} value={headers} onChange={(e) => setHeaders(e.target.value)} data-testid="explain-headers" />
        <label htmlFor="explain-client">Client address (optional: for the steps and hashing that read it)</label>
        <input id="explain-client" value={client} onChange={(e) => setClient(e.target.value)} placeholder="203.0.113.7" data-testid="explain-client" />
        <label className="check">
          <input type="checkbox" checked={draft} onChange={(e) => setDraft(e.target.checked)} data-testid="explain-draft" />
          Against the drafts (compiled now) instead of what is published
        </label>
        <button type="submit" className="primary" disabled={busy} data-testid="explain-submit">
          Explain
        </button>
      </form>
      <ErrorBox error={error} testId="explain-error" />
      {answer && <ExplainResult answer={answer} />}
    </Section>
  );
}
