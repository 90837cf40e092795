import { Agent, request } from 'undici';
import { sleep } from './wait.js';

/**
 * A steady client: `rate` GETs a second on host `host` until stopped, whatever the answers take
 * (requests overlap), recording each answer's time, body (a test upstream's address) and status,
 * and why each one that was not a 200 failed.
 */
export function pacedClient(port: number, host: string, rate: number) {
  const agent = new Agent({ connections: 4 });
  const seen: { at: number; body: string; status: number }[] = [];
  const failed: string[] = [];
  let stopped = false;
  const loop = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (!stopped) {
      const p = (async () => {
        try {
          const r = await request(`http://127.0.0.1:${port}/x`, { dispatcher: agent, headers: { host } });
          const body = await r.body.text();
          seen.push({ at: Date.now(), body, status: r.statusCode });
          if (r.statusCode !== 200) failed.push(`${r.statusCode} ${body.slice(0, 80)}`);
        } catch (err) {
          failed.push(String(err));
        }
      })();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      await sleep(1000 / rate);
    }
    await Promise.all(inFlight);
  })();
  return {
    seen,
    failed,
    get failures() {
      return failed.length;
    },
    /** The bodies answered 200 since `since`. */
    since: (since: number) => new Set(seen.filter((s) => s.at >= since && s.status === 200).map((s) => s.body)),
    async stop() {
      stopped = true;
      await loop;
      await agent.close();
    },
  };
}
