/**
 * What `cluster health` says of a failed resolution: a class, never the resolver's own text
 * (which may name the operator's servers or internal names). The node log keeps the code.
 */
export type ResultClass = 'not-found' | 'timeout' | 'refused' | 'error';

const CLASSES: Record<string, ResultClass> = {
  ENOTFOUND: 'not-found',
  ENODATA: 'not-found',
  ENONAME: 'not-found',
  ETIMEOUT: 'timeout',
  ETIMEDOUT: 'timeout',
  ECONNREFUSED: 'refused',
  EREFUSED: 'refused',
};

export const resultClass = (code: string): ResultClass => CLASSES[code] ?? 'error';
