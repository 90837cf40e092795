import dns2 from 'dns2';
import type { TestContext } from 'node:test';

const { Packet } = dns2;

export interface SrvRecord {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

/** What the server answers per name (lower case); a name not here is NXDOMAIN. */
export interface Zone {
  a: Map<string, string[]>;
  srv: Map<string, SrvRecord[]>;
}

export interface TestDns {
  /** `127.0.0.1:port`, for worker.json discovery.resolvers. */
  address: string;
  zone: Zone;
  /** Queries answered so far, by `name/TYPE`. */
  queries: Map<string, number>;
  /** While true the server reads queries and never answers (a resolver that hangs). */
  hang: boolean;
  stop(): Promise<void>;
  /** Listens again on the same port (after stop). */
  start(): Promise<void>;
}

/** A DNS server (dns2, UDP) on 127.0.0.1 at a port chosen now, answering from a zone the test changes; TTL 1 s. */
export async function startDns(t: TestContext): Promise<TestDns> {
  const zone: Zone = { a: new Map(), srv: new Map() };
  const queries = new Map<string, number>();
  let port = 0;
  let server: ReturnType<typeof dns2.createServer> | null = null;
  const listen = async () => {
    const s = dns2.createServer({
      udp: true,
      handle: (request: { questions: { name: string; type: number }[] }, send: (r: unknown) => void) => {
        if (me.hang) return;
        const response = Packet.createResponseFromRequest(request);
        const [q] = request.questions;
        const name = q!.name.toLowerCase();
        const type = q!.type === Packet.TYPE.SRV ? 'SRV' : q!.type === Packet.TYPE.A ? 'A' : String(q!.type);
        queries.set(`${name}/${type}`, (queries.get(`${name}/${type}`) ?? 0) + 1);
        if (type === 'A' && zone.a.has(name)) {
          for (const address of zone.a.get(name)!) response.answers.push({ name: q!.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address });
        } else if (type === 'SRV' && zone.srv.has(name)) {
          for (const r of zone.srv.get(name)!) response.answers.push({ name: q!.name, type: Packet.TYPE.SRV, class: Packet.CLASS.IN, ttl: 1, ...r });
        } else if (!zone.a.has(name) && !zone.srv.has(name)) {
          response.header.rcode = Packet.RCODE?.NXDOMAIN ?? 3;
        }
        send(response);
      },
    });
    await s.listen({ udp: { port, address: '127.0.0.1' } });
    port = (s.addresses() as { udp: { port: number } }).udp.port;
    server = s;
  };
  await listen();
  const stop = async () => {
    const s = server;
    server = null;
    if (s) await s.close();
  };
  t.after(stop);
  const me: TestDns = { address: `127.0.0.1:${port}`, zone, queries, hang: false, stop, start: listen };
  return me;
}
