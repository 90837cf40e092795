import type { Page } from 'playwright-core';

/**
 * Drives the console's Explain view (console/src/views/Explain.tsx) and reads what it and the
 * Publish view's diff (PublishDiff.tsx) drew. Submitting clears the last answer, so the
 * result waited for is this request's.
 */
export async function explainIn(page: Page, method: string, url: string, headers = '', draft = false): Promise<void> {
  await page.getByTestId('explain-method').selectOption(method);
  await page.getByTestId('explain-url').fill(url);
  await page.getByTestId('explain-headers').fill(headers);
  await page.getByTestId('explain-draft').setChecked(draft);
  await Promise.all([page.waitForResponse((r) => r.url().endsWith('/explain')), page.getByTestId('explain-submit').click()]);
  await page.getByTestId('explain-result').waitFor();
}

export interface CandidateRow {
  route: string;
  outcome: string | null;
  reason: string | null;
  /** Drawn as the winner (highlighted). */
  winner: boolean;
}

/** Each candidate row as drawn, top to bottom. */
export function candidateRows(page: Page): Promise<CandidateRow[]> {
  return page.locator('[data-testid="explain-candidates"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      route: tr.getAttribute('data-testid')!.slice('candidate-'.length),
      outcome: tr.getAttribute('data-outcome'),
      reason: tr.lastElementChild!.textContent,
      winner: tr.classList.contains('winner'),
    })),
  );
}

/** The winner's top-level steps as drawn: code and verdict (null when the server sent none). */
export function stepRows(page: Page): Promise<{ code: string | null; verdict: string | null }[]> {
  return page
    .getByTestId('explain-steps')
    .locator(':scope > li')
    .evaluateAll((lis) => lis.map((li) => ({ code: li.getAttribute('data-code'), verdict: li.getAttribute('data-verdict') })));
}

export interface DiffRow {
  /** kind/name */
  entity: string;
  action: string | null;
  /** Each changed field: pointer, old and new as shown. */
  changes: [string, string | null, string | null][];
}

/** Clicks Diff on the Publish view and reads each row it draws. */
export async function diffRows(page: Page): Promise<DiffRow[]> {
  await page.getByTestId('diff-show').click();
  await page.getByTestId('diff-result').waitFor();
  return page.locator('[data-testid="diff"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => {
      const entity = tr.getAttribute('data-testid')!.slice('diff-'.length);
      const changes = [...tr.querySelectorAll('li')].map((li): [string, string | null, string | null] => [
        li.getAttribute('data-testid')!.slice(`diff-change-${entity}`.length),
        li.querySelector('[data-testid="diff-old"]')!.textContent,
        li.querySelector('[data-testid="diff-new"]')!.textContent,
      ]);
      return { entity, action: tr.getAttribute('data-action'), changes };
    }),
  );
}
