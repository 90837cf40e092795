import { Agent, request } from 'undici';
import { createServer } from 'node:http';
const s = createServer((q, r) => r.end('ok')); await new Promise((r) => s.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${s.address().port}/`;
const agent = new Agent({ connections: 2 });
for (let i = 0; i < 3; i++) { try { await request(url, { dispatcher: agent, headers: { 'x-a': 'a\x7fb' } }); } catch (e) { console.log('bad', e.code); } }
const t = setTimeout(() => { console.log('good request: no answer after 2 s'); process.exit(0); }, 2000);
const r = await request(url, { dispatcher: agent }); console.log('good', r.statusCode, await r.body.text()); clearTimeout(t); process.exit(0);
