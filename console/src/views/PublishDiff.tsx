import { api, tpath } from '../api';
import type { FieldChange, Plan } from '../../../src/contracts/state-plan';
import { Table } from '../components';
import { VIEW_OF_KIND } from '../hash-route';

/** The diff's answer: its types live with the server's (src/contracts/state-plan.ts). */
export type { FieldChange, PlanItem } from '../../../src/contracts/state-plan';
export type DiffAnswer = Plan;

/**
 * What a publish would change: the state the next publish would make (the drafts over the
 * published state, staged deletes gone) planned against the published state. Two reads;
 * `diff` prunes by default, so what the drafts lack (a staged delete) comes back as a delete.
 */
export async function loadDiff(tenant: string): Promise<DiffAnswer> {
  const state = await api<unknown>('GET', tpath(tenant, 'export?state=drafts'));
  return api<DiffAnswer>('POST', tpath(tenant, 'diff'), { state, against: 'published' });
}

/** Values longer than this are cut (a certificate PEM, a large settings object): the editor shows them whole. */
const MAX_VALUE = 120;

function shown(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

/** Creates, updates (each changed field: pointer, old → new) and deletes; unchanged entities only counted. */
export function DiffResult({ diff }: { diff: DiffAnswer }) {
  const rows = diff.items.filter((i) => i.action !== 'unchanged');
  const { create, update, delete: deleted, unchanged } = diff.counts;
  return (
    <div data-testid="diff-result">
      <p data-testid="diff-counts">
        {create} to create, {update} to update, {deleted} to delete; {unchanged} unchanged.
      </p>
      {rows.length === 0 ? (
        <p data-testid="diff-nothing">Nothing to publish: the drafts match what is published.</p>
      ) : (
        <Table data-testid="diff" head={['Entity', 'Change', 'Fields']}>
          {rows.map((i) => {
            const id = `${i.kind}/${i.name}`;
            return (
              <tr key={id} data-testid={`diff-${id}`} data-action={i.action} className={`diff-${i.action}`}>
                <td>
                  <a href={`#/${VIEW_OF_KIND[i.kind] ?? 'routes'}/${encodeURIComponent(i.name)}`}>{id}</a>
                </td>
                <td data-testid={`diff-action-${id}`}>{i.action}</td>
                <td>{i.changes && <Changes id={id} changes={i.changes} />}</td>
              </tr>
            );
          })}
        </Table>
      )}
    </div>
  );
}

function Changes({ id, changes }: { id: string; changes: FieldChange[] }) {
  return (
    <ul className="plain changes">
      {changes.map((c) => (
        <li key={c.pointer} data-testid={`diff-change-${id}${c.pointer}`}>
          <code>{c.pointer || '/'}</code>:{' '}
          <code className="old" data-testid="diff-old">
            {'old' in c ? shown(c.old) : '(absent)'}
          </code>{' '}
          →{' '}
          <code className="new" data-testid="diff-new">
            {'new' in c ? shown(c.new) : '(absent)'}
          </code>
        </li>
      ))}
    </ul>
  );
}
