// Requests: static validation + authorization + apply of NYM creations (trustee-signed, batches
// of 500 applied to uncommitted state and reverted), with and without signature verification.
// Signing is done before measuring. Target: >= 10,000 NYM/s on one core without verification.
//
// Every rate is given as wall-clock, per CPU-second of the process and of the main thread, with the
// load average (see lib.ts); on a shared machine the target is best judged on the CPU rate (the rate
// one fully available core reaches; 1e6 / rate is the CPU time per request in µs).
//
// Profile: node --conditions=quire-source --import tsx --import @quire/common/polyfill \
//   --cpu-prof --cpu-prof-dir=/tmp/prof scripts/bench/requests.bench.ts
import { parseJson, signatureInput, stringifyJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { openNodeStores } from '@quire/node';
import { RequestExecutor, SignatureVerifier, type Txn } from '@quire/requests';
import { openMemoryKvStore } from '@quire/storage';
import { measure } from './lib.js';

const BATCH = 500;
const TARGET = 10_000;
const GENESIS = [
  '{"reqSignature":{},"txn":{"data":{"dest":"V4SGRU86Z58d6TV7PBUe6f","role":"0","verkey":"~CoRER63DVYnWZtK8uAzNbx"},"metadata":{},"type":"1"},"txnMetadata":{"seqNo":1},"ver":"1"}',
];

async function setup(verifySignatures: boolean): Promise<{ executor: RequestExecutor; close: () => Promise<void> }> {
  const kv = await openMemoryKvStore();
  // the stores as a node opens them
  const { requestStores: stores } = await openNodeStores(kv);
  const executor = new RequestExecutor({ verifySignatures }, { stores });
  await executor.applyGenesis(
    1,
    GENESIS.map((l) => parseJson(l) as Txn),
  );
  return { executor, close: () => kv.close() };
}

const trustee = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
const requests: Record<string, unknown>[] = [];
for (let i = 0; i < BATCH; i++) {
  const user = Ed25519Signer.fromSeed(`bench-user-${String(i).padStart(21, '0')}`);
  const req: Record<string, unknown> = {
    identifier: trustee.did,
    reqId: 1_700_000_000_000_000_000n + BigInt(i),
    protocolVersion: 2,
    operation: { type: '1', dest: user.did, verkey: user.verkey },
  };
  req.signature = trustee.signBase58(signatureInput(req));
  requests.push(req);
}
const requestTexts = requests.map((r) => stringifyJson(r));

/** Warms the JIT up first (so the CPU figure is not that of unoptimised code), then measures `fn` (one batch). */
async function run(label: string, fn: () => Promise<void>, target?: number): Promise<void> {
  for (let i = 0; i < 20; i++) await fn();
  await measure(label, fn, { opsPerCall: BATCH, unit: 'NYM/s', rounds: 7, roundMs: 600, ...(target === undefined ? {} : { target }) });
}

for (const [verify, input] of [
  [false, 'objects'],
  [false, 'JSON text'],
  [true, 'objects'],
] as const) {
  const { executor, close } = await setup(verify);
  const batch = input === 'objects' ? requests : requestTexts;
  let ppTime = 1_700_000_000;
  const first = await executor.applyBatch(1, batch, ppTime);
  if (first.validCount !== BATCH)
    throw new Error(`only ${first.validCount} of ${BATCH} valid: ${JSON.stringify((first.results.find((r) => !r.valid) as { reason?: string }).reason)}`);
  executor.revert();
  const label = `NYM create ${verify ? 'with' : 'without'} sig check (${input})`;
  await run(
    label,
    async () => {
      // with verification, a fresh signature cache each call so every signature is verified
      if (verify) (executor as unknown as { verifier: SignatureVerifier }).verifier = new SignatureVerifier();
      await executor.applyBatch(1, batch, ppTime++);
      executor.revert();
    },
    verify ? undefined : TARGET,
  );
  await close();
}
