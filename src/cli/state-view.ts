import type { View } from './output/human.js';

interface Change {
  pointer: string;
  old?: unknown;
  new?: unknown;
}

const shown = (v: unknown) => (v === undefined ? '∅' : JSON.stringify(v));

/** A plan (diff, sync) on a terminal: one row per entity, its changed fields by pointer. */
export const PLAN_VIEW: View = {
  hide: ['changed', 'items'],
  columns: [
    'kind',
    'name',
    'action',
    {
      path: 'changes',
      title: 'CHANGED FIELDS',
      format: (v) => (Array.isArray(v) ? (v as Change[]).map((c) => `${c.pointer || '/'}: ${shown(c.old)} → ${shown(c.new)}`).join('; ') : ''),
    },
  ],
};
