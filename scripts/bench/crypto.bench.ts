// Benchmarks of @quire/crypto on one core: Ed25519 (native and portable) and BLS12-381.
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed, blsVerify, blsVerifyAggregate, ed25519Verify, ed25519VerifyPortable } from '@quire/crypto';
import { measure } from './lib.js';

const msg = new Uint8Array(
  Buffer.from(
    'identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|role:101|type:1|verkey:~CoRER63DVYnWZtK8uAzNbx|protocolVersion:2|reqId:1585221529670242337',
  ),
);

const signer = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
const sig = signer.sign(msg);
await measure('ed25519 sign (native)', () => signer.sign(msg));
await measure('ed25519 verify (native, cached key)', () => ed25519Verify(signer.publicKey, msg, sig), { target: 5_000 });
await measure('ed25519 verify (@noble/ed25519, portable)', () => ed25519VerifyPortable(signer.publicKey, msg, sig));

const blsMsg = new Uint8Array(216).fill(0x61);
const keys = [1, 2, 3, 4].map((i) => blsKeyFromSeed(`Node${i}`.padStart(32, '0')));
const sigs = keys.map((k) => k.sign(blsMsg));
const pks = keys.map((k) => k.publicKey);
const agg = blsAggregateSignatures(sigs);
await measure('bls sign', () => keys[0]!.sign(blsMsg));
await measure('bls verify', () => blsVerify(pks[0]!, blsMsg, sigs[0]!));
await measure('bls aggregate 4 signatures (strict decode)', () => blsAggregateSignatures(sigs));
await measure('bls aggregate 4 signatures (already verified)', () => blsAggregateSignatures(sigs, { verified: true }));
await measure('bls fastAggregateVerify(4)', () => blsVerifyAggregate(pks, blsMsg, agg));
