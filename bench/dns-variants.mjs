// A cluster of 2 targets found by DNS against the static cluster of the same 2 targets, on one
// one-worker gateway: the upstream at 127.0.0.1 and at its IPv4-mapped IPv6 address (two
// targets, one server), written as addresses in one cluster and given by a DNS name (an A and
// an AAAA record) in the other. The DNS server (dns2) runs in this process, on a port chosen
// now; its records' TTL is long, so the bench measures serving, not resolving.
import dns2 from 'dns2';
import { startGateway } from './gateway.mjs';

const NAME = 'bench-upstream.test';

/** `::ffff:7f00:1` for 127.0.0.1: dns2 encodes only the hex form of an IPv4-mapped address. */
const mapped = (v4) => {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

async function dnsServer(host, upstreamHost) {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      if (q.name.toLowerCase() === NAME && q.type === Packet.TYPE.A) response.answers.push({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 300, address: upstreamHost });
      if (q.name.toLowerCase() === NAME && q.type === Packet.TYPE.AAAA) response.answers.push({ name: q.name, type: Packet.TYPE.AAAA, class: Packet.CLASS.IN, ttl: 300, address: mapped(upstreamHost) });
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: host } });
  return { server, address: `${host}:${server.addresses().udp.port}` };
}

export async function dnsVariants(procs, { root, benchDir, host, upstreamPort, cpu, freePort, log }) {
  const dns = await dnsServer(host, host);
  procs.onStop(() => dns.server.close());
  const clusters = [
    ['bench-static-pair', { targets: [`${host}:${upstreamPort}`, `[${mapped(host)}]:${upstreamPort}`] }],
    ['bench-dns-pair', { targets: [{ dns: NAME, port: upstreamPort }, { dns: NAME, type: 'AAAA', port: upstreamPort }] }],
  ];
  const routes = [
    ['bench-static-pair', { cluster: 'bench-static-pair', pathPrefix: '/static-pair', order: 10 }],
    ['bench-dns-pair', { cluster: 'bench-dns-pair', pathPrefix: '/dns-pair', order: 10 }],
  ];
  const gw = await startGateway(procs, { root, benchDir, host, upstreamPort, cpu, freePort, extra: { discovery: { resolvers: [dns.address] } }, clusters, routes });
  log(`DNS pair gateway ${gw.data} (resolver ${dns.address})`);
  return [
    { key: 'clusterStaticPair', label: 'cluster of 2 targets written as addresses', url: `${gw.data}/static-pair`, pid: gw.pid },
    { key: 'clusterDnsPair', label: 'cluster of the same 2 targets found by DNS (A + AAAA)', url: `${gw.data}/dns-pair`, pid: gw.pid },
  ];
}
