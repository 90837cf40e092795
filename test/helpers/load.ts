import { Agent, request } from 'undici';

/**
 * `total` GETs of `/x` (Host a.test) to a data port from `clients` keep-alive clients in
 * parallel, `headers(i)` added to request i; resolves with every answer's status.
 */
export async function sendMany(port: number, total: number, clients = 4, headers: (i: number) => Record<string, string> = () => ({})): Promise<number[]> {
  const agent = new Agent({ connections: clients });
  const statuses: number[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < total) {
          const i = next++;
          const r = await request(`http://127.0.0.1:${port}/x`, { dispatcher: agent, headers: { host: 'a.test', ...headers(i) } });
          await r.body.text();
          statuses.push(r.statusCode);
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return statuses;
}
