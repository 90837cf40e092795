/** Slots of the Int32Array the supervisor and the PostgreSQL thread share (sync-pg.ts, pg-thread.ts). */
/** Bumped after every answer posted: the supervisor waits on it. */
export const ANSWERS = 0;
/** 1 while the thread has no working connection: the supervisor refuses store calls at once. */
export const DOWN = 1;
export const SLOTS = 2;
