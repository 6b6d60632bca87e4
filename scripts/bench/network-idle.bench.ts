// The CPU an idle pool's node hosts spend on liveness alone: 4 node hosts in one process on loopback, connected and
// sending nothing, for a while, once per ping interval given. Each interval's run reports the process's CPU per
// second, the connections held and the ping streams they imply (every connection is pinged once per interval, from each end).
// Run: node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/network-idle.bench.ts [seconds] [interval ms ...]
import { b58encode } from '@quire/common';
import { libp2pPrivateKeyFromSeed } from '@quire/crypto';
import { NodeHost } from '@quire/network';
import { loadAverages, sample, since } from './lib.js';

const N = 4;
const seconds = Number(process.argv[2] ?? 10);
const intervals = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [1000, 10_000];

function seed(i: number): Uint8Array {
  return new TextEncoder().encode(`Node${i}`.padStart(32, '0'));
}

async function idleRun(pingIntervalMs: number): Promise<void> {
  const hosts: NodeHost[] = [];
  for (let i = 1; i <= N; i++) hosts.push(await NodeHost.create({ name: `Node${i}`, seed: seed(i), pingIntervalMs }));
  const validators = await Promise.all(
    hosts.map(async (h, i) => ({
      name: h.name,
      dest: b58encode((await libp2pPrivateKeyFromSeed(seed(i + 1))).publicKey.raw),
      host: '127.0.0.1',
      port: h.port,
    })),
  );
  for (const h of hosts) h.setValidators(validators);
  const end = Date.now() + 15_000;
  while (!hosts.every((h) => h.connectedPeers().length === N - 1)) {
    if (Date.now() > end) throw new Error('pool did not form');
    await new Promise((r) => setTimeout(r, 20));
  }
  // past the start-up (identify, gossipsub's first heartbeats)
  await new Promise((r) => setTimeout(r, 3000));
  const connections = hosts.reduce((n, h) => n + (h as unknown as { libp2p: { getConnections(): unknown[] } }).libp2p.getConnections().length, 0);
  const t = sample();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const d = since(t);
  const pingsPerS = (connections * 1000) / pingIntervalMs;
  console.log(
    `ping every ${pingIntervalMs} ms: ${connections} connection ends, ${pingsPerS.toFixed(1)} pings/s sent by the 4 hosts; ` +
      `CPU ${(d.cpuUs / 1000 / (d.wallMs / 1000)).toFixed(2)} ms/s (main thread ${d.mainMs === undefined ? 'n/a' : `${(d.mainMs / (d.wallMs / 1000)).toFixed(2)} ms/s`}) over ${(d.wallMs / 1000).toFixed(1)} s; load ${loadAverages()}`,
  );
  await Promise.all(hosts.map((h) => h.close()));
}

for (const ms of intervals) await idleRun(ms);
