// Header edits in both directions. The steps' request-header edits (set, add, remove)
// are kept flat as `op, name, value` triples (no object per edit) and reduced to a plan
// the proxy applies in its one pass over the client's headers; the response-headers step
// compiles its settings to a plan once and applies it to each response head. Pure:
// unit-tested in test/unit/header-edits.test.ts.

export const SET = 0;
export const ADD = 1;
export const REMOVE = 2;

export type HeaderEdits = (number | string)[];

/** Names whose client values are dropped, and the values appended after the rest. */
export interface EditPlan {
  drop: string[];
  tail: string[];
}

/**
 * The edits reduced to what the upstream list needs: the names whose client values are
 * dropped (the last set/remove of a name wins over them), and the values appended after
 * the rest (adds not overridden later, then the set values).
 */
export function editPlan(e: HeaderEdits): EditPlan {
  return simplePlan(e) ?? generalPlan(e);
}

/**
 * The common case, in one pass: only sets and removes, each name once. Then the names
 * are the drops and the set values the tail, in edit order, as generalPlan would give.
 */
function simplePlan(e: HeaderEdits): EditPlan | null {
  const drop: string[] = [];
  const tail: string[] = [];
  for (let i = 0; i < e.length; i += 3) {
    const name = e[i + 1] as string;
    if (e[i] === ADD || drop.includes(name)) return null;
    drop.push(name);
    if (e[i] === SET) tail.push(name, e[i + 2] as string);
  }
  return { drop, tail };
}

function generalPlan(e: HeaderEdits): EditPlan {
  // Routes edit a handful of names: arrays and indexOf beat a Map here.
  const drop: string[] = [];
  const values: string[][] = [];
  const adds: string[] = [];
  for (let i = 0; i < e.length; i += 3) {
    const op = e[i] as number;
    const name = e[i + 1] as string;
    const at = drop.indexOf(name);
    if (op === ADD) {
      if (at >= 0) values[at]!.push(e[i + 2] as string);
      else adds.push(name, e[i + 2] as string);
      continue;
    }
    const replaced = op === SET ? [e[i + 2] as string] : [];
    if (at >= 0) values[at] = replaced;
    else {
      drop.push(name);
      values.push(replaced);
    }
  }
  // An add made before a later set/remove of the same name is overridden with the client's values.
  const tail: string[] = [];
  for (let i = 0; i < adds.length; i += 2) if (!drop.includes(adds[i]!)) tail.push(adds[i]!, adds[i + 1]!);
  for (let n = 0; n < drop.length; n++) for (const val of values[n]!) tail.push(drop[n]!, val);
  return { drop, tail };
}

/** A plan applied to a flat [name, value, …] header list (the proxy inlines the same rule in its own pass). */
export function applyPlan(flat: readonly string[], plan: EditPlan): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) if (!plan.drop.includes(flat[i]!)) out.push(flat[i]!, flat[i + 1]!);
  for (let i = 0; i < plan.tail.length; i++) out.push(plan.tail[i]!);
  return out;
}

/** The same rule applied to a response head's name/value pairs, in place. */
export function applyPlanToHead(head: { headers: [string, string][] }, plan: EditPlan): void {
  if (plan.drop.length) head.headers = head.headers.filter(([k]) => !plan.drop.includes(k));
  for (let i = 0; i < plan.tail.length; i += 2) head.headers.push([plan.tail[i]!, plan.tail[i + 1]!]);
}
