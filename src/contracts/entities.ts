/**
 * Entity kinds and the rows the store keeps and the compiler reads: the admin edge,
 * the store, the publisher and the compiler all speak these, so none owns them.
 */
export const KINDS = ['cluster', 'route', 'orch', 'cert'] as const;
export type Kind = (typeof KINDS)[number];

export function isKind(s: string): s is Kind {
  return (KINDS as readonly string[]).includes(s);
}

export interface EntityRow {
  tenant: string;
  kind: Kind;
  name: string;
  doc: unknown;
}

export interface DraftRow {
  kind: Kind;
  name: string;
  /** null: a staged delete. */
  doc: unknown | null;
  /** The row as read from the store: a publish clears exactly the drafts it read, not one written since (another node's). */
  stored?: { text: string | null; updatedAt: number };
}
