import { DidKey, buildNymRequest, signRequest } from '@quire/client';
import { TestPool } from '../test-pool.ts';
import { waitFor } from '../wait.ts';
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const nym = () => signRequest(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), trustee);
const p = await TestPool.start({ name: 'vcprobe', orderingTimeoutMs: 120000, config: { logLevel: 'debug', consensus: { stateFreshnessUpdateIntervalSec: 20 } } });
const c = await p.client();
console.log('started', p.startMs);
await p.node('Node4').kill9();
for (let i = 0; i < 3; i++) await c.submitWrite(nym());
p.node('Node4').start();
await waitFor('Node4 caught up', () => (p.node('Node4').logHas('"msg":"caught up"') && p.node('Node4').logTail(5000).split('caught up').length > 2 ? true : undefined), 60000, 500);
const w = await c.submitWrite(nym()); console.log('write after restart by', w.nodes);
await p.node('Node1').kill9();
const t = Date.now();
try { await c.submitWrite(nym(), { timeoutMs: 30000 }); console.log('write ok after', Date.now() - t); } catch (e) { console.log('write failed', String(e)); }
console.log('DIR', p.dir);
process.env.QUIRE_TEST_KEEP = '1';
await p.close();
