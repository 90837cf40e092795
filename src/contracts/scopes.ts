/**
 * The admin scope families: worker.json's key check and the admin port's grants both
 * name them, so the list lives here rather than in either.
 */
export const FAMILIES = ['sys', 'cluster', 'metrics', 'config', 'publish', 'key', 'plugin', 'audit'] as const;
export type Family = (typeof FAMILIES)[number];
