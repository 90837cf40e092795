import { Table } from '../components';
import { VIEW_OF_KIND } from '../hash-route';
import type { Candidate, ExplainAnswer, RouteSummary, StepView, UpstreamView } from './explain-answer';

const OUTCOME: Record<Candidate['outcome'], string> = { wins: 'wins', path: 'path differs', host: 'host differs', method: 'method differs', outranked: 'outranked' };

/** One explain answer: the verdict, every route in rank order (the winner highlighted), then the winner's chain. */
export function ExplainResult({ answer }: { answer: ExplainAnswer }) {
  const { route } = answer;
  const against = answer.against === 'drafts' ? 'the drafts, compiled now' : `published generation ${answer.generation ?? '?'}`;
  return (
    <div data-testid="explain-result">
      <p>
        {answer.method && (
          <code data-testid="explain-request">
            {answer.method} {answer.host || '(no host)'}
            {answer.path ?? ''}
          </code>
        )}{' '}
        against {against}: {route && <strong data-testid="explain-winner">route {route.name}</strong>}
        {route && answer.refused && ', but '}
        {answer.refused && (
          <strong className="refused" data-testid="explain-refused">
            {answer.refused}
          </strong>
        )}
      </p>
      {answer.candidates.length > 0 && (
        <Table data-testid="explain-candidates" head={['Rank', 'Route', 'Order', 'Prefix', 'Hosts', 'Methods', 'Outcome', 'Why']}>
          {answer.candidates.map((c, i) => (
            <tr key={c.route} className={c.outcome === 'wins' ? 'winner' : undefined} data-testid={`candidate-${c.route}`} data-outcome={c.outcome}>
              <td>{i + 1}</td>
              <td>
                <a href={`#/${VIEW_OF_KIND.route}/${encodeURIComponent(c.route)}`}>{c.route}</a>
              </td>
              <td>{c.order}</td>
              <td>
                <code>{c.pathPrefix}</code>
              </td>
              <td>{c.hosts?.join(', ') ?? 'any'}</td>
              <td>{c.methods?.join(', ') ?? 'any'}</td>
              <td data-testid={`candidate-outcome-${c.route}`}>{OUTCOME[c.outcome] ?? c.outcome}</td>
              <td data-testid={`candidate-reason-${c.route}`}>{c.reason}</td>
            </tr>
          ))}
        </Table>
      )}
      {route && <Winner route={route} upstream={answer.upstream ?? null} />}
    </div>
  );
}

function Winner({ route, upstream }: { route: RouteSummary; upstream: UpstreamView | null }) {
  const t = route.terminal;
  return (
    <>
      <h3>Route {route.name}</h3>
      <p data-testid="explain-terminal">
        {t.type === 'cluster' && t.cluster && `Proxied to cluster ${t.cluster}${t.websocket ? ' (WebSocket upgrades too)' : ''}.`}
        {t.type === 'redirect' && t.location && `Redirects with ${t.statusCode ?? ''} to ${t.location}; steps never run.`}
        {t.type === 'directResponse' && t.statusCode && `Answers ${t.statusCode} itself; steps never run.`}
        {route.tls === 'required' && ' The route requires TLS.'}
      </p>
      {upstream && (
        <p data-testid="explain-upstream">
          Balancing ({upstream.balance}) picks <code>{upstream.target ?? 'no target'}</code>: {upstream.reason}. The upstream receives{' '}
          <code data-testid="explain-upstream-path">
            {upstream.path}
            {upstream.query !== null ? `?${upstream.query}` : ''}
          </code>
          .
        </p>
      )}
      {t.steps &&
        (t.steps.length === 0 ? (
          <p className="hint">No steps: the request goes straight to the upstream.</p>
        ) : (
          <Steps steps={t.steps} at="step" testId="explain-steps" />
        ))}
    </>
  );
}

/** A chain in run order; a group's members are chains of their own, run side by side. `at` names each step by its position (step-1, step-1.0.0). */
function Steps({ steps, at, testId }: { steps: StepView[]; at: string; testId?: string }) {
  return (
    <ol className="steps" data-testid={testId}>
      {steps.map((s, i) => {
        const id = `${at}-${i}`;
        return (
          <li key={i} data-testid={id} data-code={s.code} data-verdict={s.verdict}>
            {s.group ? (
              <>
                <strong>group {s.group.id}</strong> (members run concurrently, merged by <code>{s.group.merge}</code>)
                {s.group.members.map((m, j) => (
                  <Steps key={j} steps={m} at={`${id}.${j}`} />
                ))}
              </>
            ) : (
              <code>{s.code}</code>
            )}{' '}
            <span className="hint">{s.failureStrategy === 'Continue' ? 'on failure: continue' : 'on failure: stop (FailFast)'}</span>
            {s.verdict && <Verdict step={s} />}
          </li>
        );
      })}
    </ol>
  );
}

function Verdict({ step }: { step: StepView }) {
  const status = [step.status, step.error].filter((x) => x !== undefined).join(' ');
  return (
    <div className={`verdict verdict-${step.verdict!.replace(/\s+/g, '-')}`}>
      <strong>{step.verdict}</strong>
      {status && ` (${status})`}
      {step.reason && `: ${step.reason}`}
    </div>
  );
}
