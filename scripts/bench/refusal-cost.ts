// The nodes' CPU per refused write: four validators' client hosts in a child process (refusal-hosts.ts: ClientHost
// with each node's door, ClientPath.doorAtFrame, whose admission refuses every write), and one SDK session per node
// (Pool.submitWrite) sending signed NYM writes, IN_FLIGHT at a time, each answered REQNACK "pool overloaded" by the
// four nodes. A refusal costs a node the frame in (Noise decryption, Yamux, framing), the door's parse and the
// REQNACK's text, and the frame out (Noise encryption, Yamux): the figure is the child's CPU (all its threads) per
// refusal and node, what a node of an overloaded pool spends per write it refuses.
// With a rate, writes are sent open loop instead, as the load generator sends them: rate / 100 every 10 ms.
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/refusal-cost.ts [seconds] [in flight] [rate/s]
import { fork } from 'node:child_process';
import { stringifyJson, type Request } from '@quire/common';
import { ClientError, ClientErrorCode, DidKey, Pool, buildNymRequest, signRequest } from '@quire/client';
import { loadAverages } from './lib.js';
import { readFixture } from './read-fixture.js';

const SECONDS = Number(process.argv[2] ?? 10);
const IN_FLIGHT = Number(process.argv[3] ?? 256);
const RATE = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
console.log(`load average ${loadAverages()} (the figures are CPU time; wall-clock rates scale down on a busy machine)`);

const { genesisWith, dests } = await readFixture(1_700_000_000);
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const enc = new TextEncoder();
// signed ahead, as the load generator's writes are; each sent once (the door remembers no refusal here, but a real
// intake would refuse a write it refused before without a second look)
const made = Array.from({ length: 8192 }, (_, i) => {
  const request: Request = signRequest(
    buildNymRequest({ submitter: trustee.did, dest: dests[i % dests.length] ?? '', verkey: '~CoRER63DVYnWZtK8uAzNbx' }),
    trustee,
  );
  return { request, payload: enc.encode(stringifyJson(request)) };
});

const child = fork(new URL('./refusal-hosts.ts', import.meta.url), [], {
  execArgv: ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill'],
});
const next = <T>(): Promise<T> => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
const { ports } = await next<{ ports: number[] }>();
const cpu = async (): Promise<{ cpuUs: number; refused: number }> => {
  const p = next<{ cpuUs: number; refused: number }>();
  child.send('cpu');
  return p;
};

const sdk = await Pool.fromGenesisText(genesisWith(ports));
let k = 0;
/** `n` writes sent now, each refused */
function send(n: number): Promise<void>[] {
  return Array.from({ length: n }, () => {
    const w = made[k++ % made.length];
    if (w === undefined) throw new Error('no write prepared');
    return sdk.submitWrite(w.request, { payload: w.payload }).then(
      () => {
        throw new Error('a refused write was accepted');
      },
      (e: unknown) => {
        if (!(e instanceof ClientError) || e.code !== ClientErrorCode.REQUEST_NACKED) throw e;
      },
    );
  });
}
async function round(): Promise<void> {
  await Promise.all(send(IN_FLIGHT));
}
/** open loop for `ms`: RATE / 100 writes every 10 ms; resolves once every write sent is answered */
async function openLoop(ms: number): Promise<number> {
  const perTick = Math.max(1, Math.round((RATE ?? 0) / 100));
  const sent: Promise<void>[] = [];
  const start = performance.now();
  let ticks = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.floor((performance.now() - start) / 10) + 1;
      for (; ticks < due; ticks++) sent.push(...send(perTick));
      if (performance.now() - start >= ms) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await Promise.all(sent);
  return sent.length;
}
try {
  // warm-up: sessions, JIT
  const warm = performance.now();
  if (RATE === undefined) while (performance.now() - warm < 2000) await round();
  else await openLoop(2000);
  // the SDK fails a write at f+1 = 2 REQNACKs: the other two nodes' refusals may still be on their way; each round's
  // refusals are counted by the nodes themselves
  const a = await cpu();
  const t0 = performance.now();
  const client0 = process.cpuUsage();
  let writes = 0;
  if (RATE !== undefined) writes = await openLoop(SECONDS * 1000);
  else
    while (performance.now() - t0 < SECONDS * 1000) {
      await round();
      writes += IN_FLIGHT;
    }
  const wallMs = performance.now() - t0;
  const clientCpu = process.cpuUsage(client0);
  const b = await cpu();
  const refusals = b.refused - a.refused;
  const nodeUs = b.cpuUs - a.cpuUs;
  console.log(
    `refused writes: ${writes} sent in ${(wallMs / 1000).toFixed(1)} s (${Math.round((writes * 1000) / wallMs)}/s), ${refusals} REQNACKs from the 4 nodes` +
      ` (${(refusals / writes).toFixed(2)} per write), ${RATE === undefined ? `${IN_FLIGHT} in flight` : `open loop at ${RATE}/s`}`,
  );
  console.log(
    `node CPU per refusal: ${(nodeUs / refusals).toFixed(1)} us (4 nodes: ${(nodeUs / 1000).toFixed(0)} ms of CPU, ${((nodeUs / 1000 / wallMs) * 100).toFixed(0)} % of a core);` +
      ` client CPU per write: ${((clientCpu.user + clientCpu.system) / writes).toFixed(1)} us`,
  );
} finally {
  await sdk.close();
  child.send('close');
  await new Promise((resolve) => child.once('exit', resolve));
}
