import type { Kind } from './entities.js';

/**
 * A plan of a state document against the gateway's state (`diff`, `sync`): the server makes
 * it (src/admin/state/state-plan.ts), the CLI and the console show it.
 */

/** One field that differs: where (a JSON pointer into the entity), and its values (absent: no such field). */
export interface FieldChange {
  pointer: string;
  old?: unknown;
  new?: unknown;
}

export interface PlanItem {
  kind: Kind;
  name: string;
  action: 'create' | 'update' | 'delete' | 'unchanged';
  /** For an update: the fields that differ. */
  changes?: FieldChange[];
}

export interface Plan {
  items: PlanItem[];
  counts: Record<PlanItem['action'], number>;
  /** Whether applying the state would change anything. */
  changed: boolean;
}
