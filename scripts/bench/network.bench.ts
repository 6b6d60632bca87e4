// Benchmarks of @quire/network: 4 node hosts in one process on loopback. Direct framed streams versus gossipsub
// (StrictNoSign with content-addressed ids, and StrictSign) for consensus-sized messages: latency of one broadcast
// to the 3 other nodes (until the last one has it) and throughput of bursts, one sender or all four at once.
// Throughputs are given as wall-clock, per CPU-second of the process and of the main thread (the four hosts share
// this process), with the load average (see lib.ts).
// Run: npm run bench -- network
import { b58encode } from '@quire/common';
import { libp2pPrivateKeyFromSeed } from '@quire/crypto';
import { NodeHost, type NodeHostOptions } from '@quire/network';
import { performance } from 'node:perf_hooks';
import { record, report, sample, since, type CpuClock } from './lib.js';

const TOPIC = '/quire/bench/consensus/1';
const N = 4;

interface Pool {
  hosts: NodeHost[];
  /** Called on every delivery (direct or gossip): receiver index, payload. */
  onDeliver: (rx: number, data: Uint8Array) => void;
}

function seed(i: number): Uint8Array {
  return new TextEncoder().encode(`Node${i}`.padStart(32, '0'));
}

async function startPool(policy: NodeHostOptions['gossipSignaturePolicy']): Promise<Pool> {
  const pool: Pool = { hosts: [], onDeliver: () => undefined };
  for (let i = 1; i <= N; i++) {
    const h = await NodeHost.create({ name: `Node${i}`, seed: seed(i), gossipSignaturePolicy: policy });
    const rx = i - 1;
    h.on('message', (_from, data) => pool.onDeliver(rx, data));
    h.subscribe(TOPIC, (m) => pool.onDeliver(rx, m.data));
    pool.hosts.push(h);
  }
  const validators = await Promise.all(
    pool.hosts.map(async (h, i) => ({
      name: h.name,
      dest: b58encode((await libp2pPrivateKeyFromSeed(seed(i + 1))).publicKey.raw),
      host: '127.0.0.1',
      port: h.port,
    })),
  );
  for (const h of pool.hosts) h.setValidators(validators);
  const end = Date.now() + 15_000;
  while (!pool.hosts.every((h) => h.connectedPeers().length === N - 1 && h.topicPeers(TOPIC).length === N - 1)) {
    if (Date.now() > end) throw new Error('pool did not form');
    await new Promise((r) => setTimeout(r, 20));
  }
  // let the gossipsub mesh settle (first heartbeat)
  await new Promise((r) => setTimeout(r, 1200));
  return pool;
}

type Mode = 'direct' | 'gossip';
let counter = 0;

/** A payload of `size` bytes whose first 8 bytes are a unique sequence number (gossip ids are content hashes). */
function payload(size: number): Uint8Array {
  const b = new Uint8Array(size);
  new DataView(b.buffer).setFloat64(0, ++counter);
  return b;
}

function keyOf(data: Uint8Array): number {
  return new DataView(data.buffer, data.byteOffset, 8).getFloat64(0);
}

async function send(pool: Pool, mode: Mode, from: number, data: Uint8Array): Promise<void> {
  if (mode === 'direct') pool.hosts[from]!.broadcast(data);
  else await pool.hosts[from]!.publish(TOPIC, data);
}

/** Median and p99 time until all 3 others hold one message, sent one after another. */
async function latency(pool: Pool, mode: Mode, size: number, count: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let k = 0; k < count; k++) {
    const data = payload(size);
    const key = keyOf(data);
    let got = 0;
    const done = new Promise<void>((resolve) => {
      pool.onDeliver = (_rx, d) => {
        if (keyOf(d) === key && ++got === N - 1) resolve();
      };
    });
    const t0 = performance.now();
    await send(pool, mode, 0, data);
    await done;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! };
}

/**
 * Broadcasts (each delivered to all 3 others) of a burst of `count` from `senders` nodes at once, and the time they
 * took. When not everything arrives within 20 s, the delivered share is printed and only delivered messages count.
 */
async function throughput(pool: Pool, mode: Mode, size: number, count: number, senders: number): Promise<{ broadcasts: number; time: CpuClock }> {
  const expected = count * senders * (N - 1);
  let got = 0;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      console.log(`  (only ${got} of ${expected} deliveries within 20 s: ${((100 * got) / expected).toFixed(1)}%)`);
      resolve();
    }, 20_000);
    pool.onDeliver = () => {
      if (++got === expected) {
        clearTimeout(timer);
        resolve();
      }
    };
  });
  const t0 = sample();
  const sending: Promise<void>[] = [];
  for (let s = 0; s < senders; s++) {
    sending.push(
      (async () => {
        for (let k = 0; k < count; k++) {
          await send(pool, mode, s, payload(size));
          if (k % 64 === 63) await new Promise((r) => setImmediate(r)); // let the event loop drain sockets
        }
      })(),
    );
  }
  await Promise.all(sending);
  await done;
  return { broadcasts: got / (N - 1), time: since(t0) };
}

const sizes: [string, number, number][] = [
  // label, bytes, burst count per sender
  ['200 B (PREPARE/COMMIT)', 200, 2000],
  ['1 KB (PROPAGATE)', 1024, 1000],
  ['10 KB (PRE-PREPARE)', 10 * 1024, 300],
  ['50 KB (PRE-PREPARE batch)', 50 * 1024, 100],
];

for (const policy of ['StrictNoSign', 'StrictSign'] as const) {
  const pool = await startPool(policy);
  const modes: Mode[] = policy === 'StrictNoSign' ? ['direct', 'gossip'] : ['gossip'];
  for (const mode of modes) {
    const label = mode === 'direct' ? 'direct streams' : `gossipsub ${policy}`;
    for (const [name, size, burst] of sizes) {
      const lat = await latency(pool, mode, size, 100);
      record(`${label}, ${name}: broadcast latency p50`, lat.p50 * 1000, undefined, 'µs');
      record(`${label}, ${name}: broadcast latency p99`, lat.p99 * 1000, undefined, 'µs');
      const one = await throughput(pool, mode, size, burst, 1);
      report(`${label}, ${name}: 1 sender burst`, one.broadcasts, one.time, { unit: 'broadcasts/s' });
      if (size <= 1024) {
        const four = await throughput(pool, mode, size, Math.floor(burst / 2), 4);
        report(`${label}, ${name}: 4 senders at once`, four.broadcasts, four.time, { unit: 'broadcasts/s' });
      }
    }
  }
  await Promise.all(pool.hosts.map((h) => h.close()));
}
