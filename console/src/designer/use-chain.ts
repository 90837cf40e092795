/**
 * The chain's life on the server, for the designer: load the palette and the chain,
 * Save (config set) and Dry-run (publish dry-run), with their outcome and findings.
 */
import { useEffect, useMemo, useState, type Dispatch } from 'react';
import type { StepInfo } from '../api';
import { asServerError, dryRun, loadChain, loadChainNames, loadSteps, saveChain, type ChainSource, type ServerError } from './chain-io';
import type { Action, Model } from './designer-state';
import { chainIssues, fieldErrorsAsIssues, resolveIssues, type ShownIssue } from './issues';
import type { DryRunOutcome } from './issues-list';
import { emptyDoc, normalizeDoc, toDocument, type OrchDoc } from './orch-doc';

const NO_ISSUES: ShownIssue[] = [];

export type Outcome = DryRunOutcome & { stale: boolean };

/** `catalog`: the server's answer lets this identity read the step catalogue (plugin.list). */
export function useChain(tenant: string, name: string, model: Model, dispatch: Dispatch<Action>, catalog: boolean) {
  const [steps, setSteps] = useState<StepInfo[] | null>(null);
  const [chainNames, setChainNames] = useState<string[]>([]);
  const [source, setSource] = useState<ChainSource | null>(null);
  /** The document the server holds as this chain's draft: dry-run pointers refer to it. */
  const [checked, setChecked] = useState<OrchDoc>(emptyDoc);
  const [busy, setBusy] = useState<'save' | 'dry-run' | null>(null);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<ServerError | null>(null);
  const [saveIssues, setSaveIssues] = useState<ShownIssue[]>(NO_ISSUES);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  useEffect(() => {
    let live = true;
    // Without the palette the chain can still be edited: its failure is shown, not fatal.
    let stepsError: unknown = null;
    const palette = (catalog ? loadSteps(tenant) : Promise.resolve([] as StepInfo[])).catch((e) => {
      stepsError = e;
      return [] as StepInfo[];
    });
    Promise.all([palette, loadChain(tenant, name)])
      .then(([s, c]) => {
        if (!live) return;
        setSteps(s);
        dispatch({ type: 'load', doc: c.doc });
        setChecked(normalizeDoc(c.doc));
        setSource(c.source);
        if (stepsError) setError(asServerError(stepsError));
      })
      .catch((e) => live && setError(asServerError(e)));
    void loadChainNames(tenant, name).then((n) => live && setChainNames(n));
    return () => {
      live = false;
    };
  }, [tenant, name, dispatch, catalog]);

  const save = async () => {
    const doc = toDocument(model.doc, model.positions, model.sizes);
    setBusy('save');
    setError(null);
    setSaved(false);
    try {
      await saveChain(tenant, name, doc);
      dispatch({ type: 'saved', doc: model.doc, positions: model.positions });
      setChecked(doc);
      setSource('draft');
      setSaveIssues(NO_ISSUES);
      setOutcome((o) => (o ? { ...o, stale: true } : o));
      setSaved(true);
    } catch (e) {
      const err = asServerError(e);
      setError(err);
      setSaveIssues(err.errors.length ? fieldErrorsAsIssues(err.errors, err.code, doc) : NO_ISSUES);
    } finally {
      setBusy(null);
    }
  };

  const runDryRun = async () => {
    setBusy('dry-run');
    setError(null);
    try {
      const r = await dryRun(tenant);
      setOutcome({ ...r, checked, stale: false });
      setSaveIssues(NO_ISSUES);
    } catch (e) {
      setError(asServerError(e));
    } finally {
      setBusy(null);
    }
  };

  /** Findings to put on the canvas: the last Save's field errors and the current dry-run's issues of this chain. */
  const findings = useMemo(
    () => [...saveIssues, ...(outcome && !outcome.stale ? resolveIssues(chainIssues(outcome.issues, name), outcome.checked) : NO_ISSUES)],
    [saveIssues, outcome, name],
  );

  return { steps, chainNames, source, busy, saved, error, outcome, findings, save, runDryRun };
}
