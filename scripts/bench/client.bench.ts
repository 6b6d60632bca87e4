// @quire/client light-client verification: a GET_NYM reply checked end to end (answers the request, trie proof
// against root_hash, BLS multi-signature of n-f validators over MP(value), freshness), without and with the
// multi-signature cache per state root. Domain state of 10,000 NYMs, a 4-validator pool with BLS keys.
// Then the SDK's write path, the CPU a client spends per write (what the load generator of bench:pool takes from the
// nodes on a shared machine): a NYM request's serialisation; the four nodes' REPLYs parsed and matched for f+1; and
// whole writes through Pool.submitWrite over libp2p to four client hosts in a worker thread (client-write-hosts.ts)
// that answer REQACK then REPLY as nodes do, closed loop, where the main thread's rate is writes per CPU-second of
// the SDK alone.
import { Worker } from 'node:worker_threads';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import { ClientError, ClientErrorCode, DidKey, MultiSignatureCache, Pool, buildNymRequest, signRequest, verifyReadReply } from '@quire/client';
import { WriteQuorum } from '../../packages/client/src/pool/write-quorum.js';
import { loadAverages, measure } from './lib.js';
import { readFixture } from './read-fixture.js';

console.log(`load average ${loadAverages()} (wall-clock figures scale down on a busy machine)`);

const now = 1_700_000_000;
const { names, genesisWith, pool, dests, replies: texts } = await readFixture(now);
const replies = texts.map((r) => ({ ...r, reply: parseJson(r.text) }));
console.log(`proof size ${replies[0]!.text.length} bytes of reply JSON`);

// 16 replies per call, so that the harness's per-call await does not weigh on sub-millisecond figures
const PER_CALL = 16;
let k = 0;
await measure(
  'GET_NYM reply: trie proof + BLS (3 of 4)  [<= 3 ms]',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: r.reply, request: r.request, pool, now });
    }
  },
  { target: 333, unit: 'replies/s', opsPerCall: PER_CALL },
);

const cache = new MultiSignatureCache();
await measure(
  'GET_NYM reply: multi-signature cached per root  [<= 0.3 ms]',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: r.reply, request: r.request, pool, now, cache });
    }
  },
  { target: 3333, unit: 'replies/s', opsPerCall: PER_CALL },
);

await measure(
  'GET_NYM reply: parse wire JSON + verify, cached',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: parseJson(r.text), request: r.request, pool, now, cache });
    }
  },
  { unit: 'replies/s', opsPerCall: PER_CALL },
);

// ---- the write path ----
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const enc = new TextEncoder();
/** a signed NYM write of `i` (the signature is checked by nobody here: the load generator signs ahead too) */
const nymWrite = (i: number): Request => {
  const d = dests[i % dests.length]!;
  return signRequest(buildNymRequest({ submitter: trustee.did, dest: d, verkey: '~CoRER63DVYnWZtK8uAzNbx' }), trustee);
};
const writes = Array.from({ length: 64 }, (_, i) => nymWrite(i));
await measure(
  'NYM write: request to JSON bytes (bigint reqId)',
  () => {
    for (let j = 0; j < PER_CALL; j++) enc.encode(stringifyJson(writes[k++ % writes.length]!));
  },
  { unit: 'requests/s', opsPerCall: PER_CALL },
);

// the four nodes' REPLY of one write, as client-write-hosts.ts sends it (equal bytes from every node)
const replyText = (req: Request, seqNo: number): string =>
  stringifyJson({
    op: 'REPLY',
    result: {
      auditPath: Array.from({ length: 17 }, () => 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa'),
      reqSignature: { type: 'ED25519', values: [{ from: req.identifier, value: req.signature }] },
      rootHash: 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1',
      txn: {
        data: { dest: req.operation.dest, verkey: req.operation.verkey },
        metadata: { digest: 'a'.repeat(64), from: req.identifier, payloadDigest: 'b'.repeat(64), reqId: req.reqId },
        protocolVersion: 2,
        type: '1',
      },
      txnMetadata: { seqNo, txnId: 'c'.repeat(64), txnTime: 1_700_000_000 },
      ver: '1',
    },
  });
const replyBytes = writes.map((w, i) => enc.encode(replyText(w, 100_000 + i)));
console.log(`write REPLY size ${replyBytes[0]!.length} bytes of JSON`);
await measure(
  'NYM write: 4 REPLYs parsed (lossless) + f+1 matching',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const raw = replyBytes[k++ % replyBytes.length]!;
      const q = new WriteQuorum(4, 1);
      for (const node of names) {
        const m = parseJson(raw) as Record<string, unknown>;
        q.add({ node, kind: 'reply', message: m, raw });
      }
    }
  },
  { unit: 'writes/s', opsPerCall: PER_CALL },
);

// the worker registers tsx itself: a worker given this process's --import flags loads the polyfill before tsx
const boot = [
  `await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => m.register());`,
  `await import(${JSON.stringify(import.meta.resolve('@quire/common/polyfill'))});`,
  `await import(${JSON.stringify(new URL('./client-write-hosts.ts', import.meta.url).href)});`,
].join('\n');
/** the writes with a reqId from here on are refused by the hosts (REQNACK "pool overloaded" from every node) */
const REFUSED_FROM = 2_000_000_000_000;
const hostsWorker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), {
  execArgv: ['--conditions=quire-source'],
  workerData: { refusedFrom: REFUSED_FROM },
});
const ports = await new Promise<number[]>((resolve, reject) => {
  hostsWorker.once('message', (m: number[]) => resolve(m));
  hostsWorker.once('error', reject);
});
const sdk = await Pool.fromGenesisText(genesisWith(ports));
try {
  // pre-serialised as the load generator's requests are (60,000: more than the rounds send), so that what is timed is
  // the write's own work in the SDK
  const IN_FLIGHT = 256;
  const made = Array.from({ length: 60_000 }, (_, i) => {
    const request = { ...writes[i % writes.length]!, reqId: BigInt(1_000_000_000_000 + i) };
    return { request, payload: enc.encode(stringifyJson(request)) };
  });
  let next = 0;
  await measure(
    `NYM write through the SDK to 4 client hosts, ${IN_FLIGHT} in flight  [main thread: SDK CPU]`,
    async () => {
      if (next + IN_FLIGHT > made.length) throw new Error('the writes prepared were used up: prepare more');
      const now = made.slice(next, (next += IN_FLIGHT));
      await Promise.all(now.map((w) => sdk.submitWrite(w.request, { payload: w.payload })));
    },
    { unit: 'writes/s', opsPerCall: IN_FLIGHT, rounds: 5, roundMs: 1_000 },
  );
  // refused writes, as an overloaded pool answers them: a REQNACK "pool overloaded" from each of the four nodes, the
  // write failed REQUEST_NACKED at the second (f+1) and the other two dropped
  // (4,096 prepared and sent again in turn: a refused write leaves nothing behind, in the SDK or the hosts)
  const refused = Array.from({ length: 4_096 }, (_, i) => {
    const request = { ...writes[i % writes.length]!, reqId: BigInt(REFUSED_FROM + i) };
    return { request, payload: enc.encode(stringifyJson(request)) };
  });
  let nextRefused = 0;
  await measure(
    `NYM write refused (4 REQNACKs "pool overloaded") through the SDK, ${IN_FLIGHT} in flight  [main thread: SDK CPU]`,
    async () => {
      if (nextRefused + IN_FLIGHT > refused.length) nextRefused = 0;
      const now = refused.slice(nextRefused, (nextRefused += IN_FLIGHT));
      await Promise.all(
        now.map((w) =>
          sdk.submitWrite(w.request, { payload: w.payload }).then(
            () => {
              throw new Error('a write the hosts refuse was accepted');
            },
            (e: unknown) => {
              if (!(e instanceof ClientError) || e.code !== ClientErrorCode.REQUEST_NACKED) throw e;
            },
          ),
        ),
      );
    },
    { unit: 'writes/s', opsPerCall: IN_FLIGHT, rounds: 5, roundMs: 1_000 },
  );
} finally {
  await sdk.close();
  hostsWorker.postMessage('close');
  await new Promise((resolve) => hostsWorker.once('exit', resolve));
}
