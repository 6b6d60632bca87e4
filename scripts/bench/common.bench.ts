// @quire/common: the canonical encodings on the hot path of every request and every ordered txn. Every rate is
// given as wall-clock, per CPU-second of the process and of the main thread, with the load average (see lib.ts).
import { parse as losslessParse, isSafeNumber } from 'lossless-json';
import { pack as msgpackrPack } from 'msgpackr';
import {
  canonicalJson,
  decodeMsgpack,
  encodeMsgpack,
  parseJson,
  payloadDigest,
  requestDigest,
  requestDigests,
  requestToTxn,
  signatureInput,
  stringifyJson,
  type Request,
} from '@quire/common';
import { measure } from './lib.js';

const requestText =
  '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1","verkey":"~CoRER63DVYnWZtK8uAzNbx","role":"101","alias":"agent-42"},' +
  '"protocolVersion":2,"reqId":1585221529670242337,"signature":"4X3skpoEK2DRgZxQ9PwuEvCJpL8JHdQ8X4HDDFyztgqE15DM2ZnkvrAh9bQY16egVinZTzwHqznmnkaFM4jjyDgd"}';
const request = parseJson(requestText) as Request;
const txn = requestToTxn(request);
txn.txnMetadata = { seqNo: 1234, txnTime: 1700000000, txnId: 'VsKV7grR1BUE29mG2Fm2kX' };
const txnBytes = encodeMsgpack(txn);
console.log(`NYM request ${requestText.length} chars, stored NYM txn ${txnBytes.length} bytes (MP)`);

await measure('encodeMsgpack(NYM txn)', () => encodeMsgpack(txn), { target: 100_000 });
await measure('decodeMsgpack(NYM txn)', () => decodeMsgpack(txnBytes));
await measure('parseJson(NYM request)', () => parseJson(requestText));
await measure('stringifyJson(NYM request)', () => stringifyJson(request));
await measure('signatureInput(NYM request)', () => signatureInput(request));
await measure('requestDigest(NYM request)', () => requestDigest(request));
await measure('payloadDigest(NYM request)', () => payloadDigest(request));
await measure('requestDigests(NYM request) (both)', () => requestDigests(request));
await measure('requestToTxn(NYM request)', () => requestToTxn(request));
await measure('canonicalJson(NYM txn)', () => canonicalJson(txn));

console.log('\nreference points (not used by Quire):');
// lossless-json with the same number policy (safe -> number, else bigint)
const reviveNumber = (s: string): unknown => (isSafeNumber(s) ? Number(s) : /^-?\d+$/.test(s) ? BigInt(s) : Number(s));
await measure('lossless-json parse(NYM request)', () => losslessParse(requestText, null, reviveNumber));
await measure('JSON.parse(NYM request) (lossy)', () => JSON.parse(requestText));
const plainTxn = JSON.parse(stringifyJson(txn));
await measure('msgpackr pack(NYM txn) (not canonical)', () => msgpackrPack(plainTxn));
