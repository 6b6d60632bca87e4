import { randomBytes } from 'node:crypto';
import { NodeHost } from '@quire/network';
import { TestPool } from '../test-pool.ts';
const p = await TestPool.start({ name: 'probe', orderingTimeoutMs: 120000 });
console.log('started', p.startMs);
const t0 = Date.now();
const s = await NodeHost.create({ name: 'Stranger', seed: new Uint8Array(randomBytes(32)), host: '127.0.0.1', port: 0 }, { logger: { debug: (o: any, m: string) => console.log(Date.now()-t0, 'debug', m, JSON.stringify(o)), info: (o: any, m: string) => console.log(Date.now()-t0,'info', m, JSON.stringify(o)), warn: (o: any, m: string) => console.log(Date.now()-t0,'warn', m, JSON.stringify(o)), error: (o: any, m: string) => console.log('error', m, JSON.stringify(o)) } as any });
s.on('peer:connect', (n) => console.log(Date.now() - t0, 'connect', n));
s.on('peer:disconnect', (n) => console.log(Date.now() - t0, 'disconnect', n));
s.on('message', (f, b) => console.log(Date.now() - t0, 'message from', f, b.length));
s.setValidators(p.nodes.map((n) => ({ name: n.name, dest: n.dest, host: '127.0.0.1', port: n.nodePort })));
for (let i = 0; i < 24; i++) { await new Promise((r) => setTimeout(r, 250)); const c = s.connectedPeers(); if (c.length) console.log(Date.now() - t0, 'connected', c.join(','), 'send', s.send('Node1', new Uint8Array([1]))); }
console.log('stats', JSON.stringify(s.stats()));
await s.close();
await p.close();
