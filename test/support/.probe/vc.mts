import { DidKey, buildNymRequest, signRequest } from '@quire/client';
import { TestPool } from '../test-pool.ts';
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const p = await TestPool.start({ name: 'vcprobe', orderingTimeoutMs: 120000, config: { logLevel: 'debug' } });
const c = await p.client();
console.log('started', p.startMs);
await p.node('Node1').kill9();
const t = Date.now();
const d = DidKey.random();
try { await c.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: d.did }), trustee), { timeoutMs: 25000 }); console.log('write ok after', Date.now() - t); } catch (e) { console.log('write failed', String(e)); }
console.log('DIR', p.dir);
process.env.QUIRE_TEST_KEEP = '1';
await p.close();
