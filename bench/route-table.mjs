// Route lookup cost against the number of routes: compiles 10 and 10,000 routes with
// the real compiler, builds the worker's RouteTable, and times lookups of matching and
// non-matching paths. Prints ns per lookup and the ratio (10,000 / 10).
//
//   npm run build && node bench/route-table.mjs
import { compile } from '../dist/compiler/compile.js';
import { RouteTable } from '../dist/shared/route-table.js';

function tableOf(n) {
  const drafts = [{ kind: 'route', name: 'catchall', doc: { directResponse: { statusCode: 404 } } }];
  for (let i = 0; i < n; i++) {
    drafts.push({ kind: 'route', name: `r${i}`, doc: { directResponse: { statusCode: 200 }, pathPrefix: `/svc/${i}/`, order: i % 7 } });
  }
  const r = compile({ tenant: 'default', published: [], drafts });
  if (!r.ok) throw new Error(JSON.stringify(r.issues.slice(0, 3)));
  return new RouteTable(r.generation, (route) => route.name);
}

function timeLookups(table, n, iterations) {
  const paths = Array.from({ length: 1024 }, (_, i) => (i % 4 === 3 ? `/other/${i}` : `/svc/${(i * 7919) % n}/items/42`));
  let sink = 0;
  for (let i = 0; i < 200_000; i++) sink += table.lookup('GET', 'example.com', paths[i & 1023]).length; // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) sink += table.lookup('GET', 'example.com', paths[i & 1023]).length;
  const ns = Number(process.hrtime.bigint() - t0) / iterations;
  return { ns, sink };
}

const rows = [];
for (const n of [10, 10_000]) {
  const table = tableOf(n);
  const runs = [0, 1, 2].map(() => timeLookups(table, n, 2_000_000).ns).sort((a, b) => a - b);
  rows.push({ routes: n, nsPerLookup: runs[1] });
}
for (const r of rows) console.log(`${String(r.routes).padStart(6)} routes: ${r.nsPerLookup.toFixed(0)} ns per lookup (median of 3)`);
console.log(`ratio 10,000 / 10: ${(rows[1].nsPerLookup / rows[0].nsPerLookup).toFixed(2)}`);
