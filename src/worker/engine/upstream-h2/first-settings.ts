import type { ClientHttp2Session } from 'node:http2';
import { errors } from 'undici';
import { closedUnder } from './h2-errors.js';

/**
 * Waits for the peer's first SETTINGS on a new session (they say how many streams it may
 * open): `done(null)` then, or `done(err)` when the session closes first or none come
 * within `ms` (a connect timeout: the upstream accepted the connection but does not speak
 * HTTP/2). The caller destroys the session on an error.
 */
export function firstSettings(session: ClientHttp2Session, ms: number, done: (err: Error | null) => void): void {
  let settled = false;
  const finish = (err: Error | null) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    session.off('close', closed);
    done(err);
  };
  const closed = () => finish(closedUnder());
  const timer = setTimeout(() => finish(new errors.ConnectTimeoutError(`no HTTP/2 SETTINGS from the upstream within ${ms} ms`)), ms);
  session.once('remoteSettings', () => finish(null)).once('close', closed);
}
