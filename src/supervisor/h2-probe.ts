import { errors } from 'undici';
import type { TargetConnection } from '../shared/upstream-connect.js';
import { openH2Session, type UpstreamH2Session } from '../shared/upstream-h2-session.js';

/** Body bytes a probe reads before it has its answer (as the HTTP/1.1 probe's dump limit). */
const READ_LIMIT = 64 * 1024;

/**
 * One health probe of an `h2`/`h2c` target: a session opened as the workers open theirs
 * (shared/upstream-h2-session.ts: the upstream policy, TLS with ALPN h2), one `GET path`
 * on it, closed after. Resolves with the answer's status once its body ended (or 64 KiB of
 * it came); rejects with the connect failure, the stream's error, or a
 * HeadersTimeoutError when no answer comes within `timeoutMs` of the request.
 */
export function probeH2(conn: TargetConnection, target: string, path: string, host: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let session: UpstreamH2Session | null = null;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (err: Error | null, status = 0) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err === null) session?.close();
      else session?.destroy();
      if (err === null) resolve(status);
      else reject(err);
    };
    openH2Session(conn, target, (err, s) => {
      if (err !== null) return finish(err);
      session = s!;
      session.on('error', (e: Error) => finish(e));
      timer = setTimeout(() => finish(new errors.HeadersTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
      const req = session.request({ ':method': 'GET', ':path': path, ':authority': host, 'user-agent': 'switchyard-health-check' }, { endStream: true });
      let status = 0;
      let read = 0;
      req.on('response', (headers) => (status = Number(headers[':status'])));
      req.on('data', (chunk: Buffer) => {
        if ((read += chunk.length) > READ_LIMIT) finish(null, status);
      });
      // A stream its session's end destroyed ends too, cut: 'close' then fails the probe.
      req.on('end', () => (req.destroyed ? undefined : finish(null, status)));
      req.on('error', (e: Error) => finish(e));
      req.on('close', () => finish(new errors.SocketError('the upstream closed the probe\'s stream')));
    });
  });
}
