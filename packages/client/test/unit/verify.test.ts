import { expect } from 'chai';
import fc from 'fast-check';
import {
  b58encode,
  b64encode,
  canonicalJson,
  encodeMsgpack,
  parseJson,
  stringifyJson,
  taaDigest,
  toHex,
  type MultiSignature,
  type Request,
} from '@quire/common';
import { StorageErrorCode, merkleLeafHash } from '@quire/storage';
import { attribKey, attribStoredHash, encodeNymRecord, encodeWrapped, nymKey, nymReadData, schemaKey, type NymRecord } from '@quire/requests';
import {
  ClientErrorCode,
  MultiSignatureCache,
  ProofError,
  buildGetAttribRequest,
  buildGetNymRequest,
  buildGetSchemaRequest,
  buildGetTxnAuthorAgreementRequest,
  buildGetTxnRequest,
  verifyAuditPath,
  verifyMultiSignature,
  verifyReadReply,
  verifyTrieProof,
} from '../../src/index.js';
import { SeenLedgers, readPosition } from '../../src/pool/seen.js';
import { same } from '../../src/verify/read-reply.js';
import { NODE_NAMES, POOL_STATE_ROOT, TXN_ROOT, codeOf, ledgerWith, multiSign, poolLedger, stateProof, stateWith } from './fixtures.js';

const NOW = 1_700_000_300;
const TS = 1_700_000_000;
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';
const pool = poolLedger.blsKeys();

const rec: NymRecord = { identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: '101', verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 42, txnTime: TS };

async function nymFixture(): Promise<{ request: ReturnType<typeof buildGetNymRequest>; reply: Record<string, unknown> }> {
  const trie = await stateWith([
    [nymKey(DEST), encodeNymRecord(rec)],
    [nymKey('Th7MpTaRZVRYnPiabds81Y'), encodeNymRecord({ ...rec, seqNo: 2 })],
  ]);
  const request = buildGetNymRequest({ dest: DEST, reqId: 1585221529670242337n });
  const result = {
    ...request.operation,
    identifier: request.identifier,
    reqId: request.reqId,
    data: nymReadData(rec, DEST),
    seqNo: 42,
    txnTime: TS,
    state_proof: stateProof(trie, nymKey(DEST), 1, TS),
  };
  // through the wire encoding, losslessly
  const reply = parseJson(stringifyJson({ op: 'REPLY', result })) as Record<string, unknown>;
  return { request, reply };
}

function verifyCode(input: Parameters<typeof verifyReadReply>[0]): string | undefined {
  return codeOf(() => verifyReadReply(input));
}

describe('verifyTrieProof', () => {
  it('returns the stored value, null for an absent key, and throws ProofError for a foreign root', async () => {
    const trie = await stateWith([
      ['33', new TextEncoder().encode('v1')],
      ['34', new TextEncoder().encode('v2')],
    ]);
    const rootHash = b58encode(trie.committedRoot);
    const v = verifyTrieProof({ rootHash, key: '33', proofNodes: b64encode(trie.generateProof('33')) });
    expect(new TextDecoder().decode(v!)).to.equal('v1');
    expect(verifyTrieProof({ rootHash, key: '3', proofNodes: b64encode(trie.generateProof('3')) })).to.equal(null);
    // a proof for key 33 does not prove a value for the prefix 3 (exact match, formats 7.5)
    expect(verifyTrieProof({ rootHash, key: '3', proofNodes: b64encode(trie.generateProof('33')) })).to.equal(null);
    const other = await stateWith([['33', new TextEncoder().encode('v9')]]);
    try {
      verifyTrieProof({ rootHash, key: '33', proofNodes: b64encode(other.generateProof('33')) });
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ProofError);
      expect((e as ProofError).code).to.equal(StorageErrorCode.PROOF_ROOT_MISMATCH);
    }
    expect(codeOf(() => verifyTrieProof({ rootHash: 'not-base58-0OIl', key: '33', proofNodes: 'wYA=' }))).to.equal(StorageErrorCode.PROOF_MALFORMED);
  });

  it('accepts the blank-root proof of the vectors as absence', () => {
    expect(verifyTrieProof({ rootHash: 'DfNLmH4DAHTKv63YPFJzuRdeEtVwF5RtVnvKYHd8iLEA', key: 'anything', proofNodes: 'wYA=' })).to.equal(null);
  });
});

describe('verifyMultiSignature', () => {
  const value = { ledger_id: 1, pool_state_root_hash: POOL_STATE_ROOT, state_root_hash: TXN_ROOT, timestamp: TS, txn_root_hash: TXN_ROOT };

  it('accepts n-f known participants and checks freshness', () => {
    expect(
      verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: { kind: 'current', now: NOW, seconds: 300 } }).participants,
    ).to.have.length(3);
    expect(
      codeOf(() => verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: { kind: 'current', now: TS + 301, seconds: 300 } })),
    ).to.equal(ClientErrorCode.MULTISIG_STALE);
    expect(codeOf(() => verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: { kind: 'as-of', at: TS + 300, seconds: 300 } }))).to.equal(
      undefined,
    );
  });

  it('rejects too few, unknown, duplicate participants and a forged aggregate with precise codes', () => {
    const fresh = { kind: 'current' as const, now: NOW, seconds: 300 };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: multiSign(value, [0, 1]), pool, freshness: fresh }))).to.equal(
      ClientErrorCode.MULTISIG_TOO_FEW_PARTICIPANTS,
    );
    const unknown = { ...multiSign(value), participants: ['Node1', 'Node2', 'Node9'] };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: unknown, pool, freshness: fresh }))).to.equal(ClientErrorCode.MULTISIG_UNKNOWN_PARTICIPANT);
    const dup = { ...multiSign(value), participants: ['Node1', 'Node1', 'Node2'] };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: dup, pool, freshness: fresh }))).to.equal(ClientErrorCode.MULTISIG_DUPLICATE_PARTICIPANT);
    // signed by 1,2,3 but claiming 1,2,4
    const lied = { ...multiSign(value, [0, 1, 2]), participants: ['Node1', 'Node2', 'Node4'] };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: lied, pool, freshness: fresh }))).to.equal(ClientErrorCode.MULTISIG_INVALID);
    // value changed after signing
    const moved = { ...multiSign(value), value: { ...value, timestamp: TS + 1 } };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: moved, pool, freshness: fresh }))).to.equal(ClientErrorCode.MULTISIG_INVALID);
    expect(codeOf(() => verifyMultiSignature({ multiSignature: { signature: 'x' }, pool, freshness: fresh }))).to.equal(ClientErrorCode.REPLY_MALFORMED);
  });

  it('caches a verified multi-signature per root and pool epoch, never a different one', () => {
    const cache = new MultiSignatureCache();
    const fresh = { kind: 'current' as const, now: NOW, seconds: 300 };
    verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: fresh, cache });
    expect(cache.size).to.equal(1);
    verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: fresh, cache });
    const forged = { ...multiSign(value), participants: ['Node1', 'Node2', 'Node4'] };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: forged, pool, freshness: fresh, cache }))).to.equal(ClientErrorCode.MULTISIG_INVALID);
    // freshness is checked even on a cache hit
    expect(
      codeOf(() => verifyMultiSignature({ multiSignature: multiSign(value), pool, freshness: { kind: 'current', now: TS + 1000, seconds: 300 }, cache })),
    ).to.equal(ClientErrorCode.MULTISIG_STALE);
  });

  it('finds a cached multi-signature by its parts: participants in another order are the same one, any other change is verified again', () => {
    const cache = new MultiSignatureCache();
    const fresh = { kind: 'current' as const, now: NOW, seconds: 300 };
    const good = multiSign(value, [0, 1, 2]);
    verifyMultiSignature({ multiSignature: good, pool, freshness: fresh, cache });
    const reordered = { ...good, participants: ['Node3', 'Node1', 'Node2'] };
    expect(cache.holds(reordered, pool.epoch)).to.equal(true);
    expect(cache.holds(good, 'another epoch')).to.equal(false);
    verifyMultiSignature({ multiSignature: reordered, pool, freshness: fresh, cache });
    // each part changed alone, after the good one was cached: not held, verified, refused
    const other = multiSign(value, [1, 2, 3]);
    const changed: Record<string, unknown>[] = [
      { ...good, signature: other.signature },
      { ...good, participants: ['Node1', 'Node2', 'Node4'] },
      { ...good, participants: ['Node1', 'Node2', 'Node3', 'Node4'] },
      ...(['ledger_id', 'pool_state_root_hash', 'txn_root_hash', 'timestamp'] as const).map((f) => ({
        ...good,
        value: { ...value, [f]: f === 'ledger_id' ? 2 : f === 'timestamp' ? TS + 1 : 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKb' },
      })),
    ];
    for (const m of changed) {
      expect(cache.holds(m as unknown as typeof good, pool.epoch)).to.equal(false);
      expect(codeOf(() => verifyMultiSignature({ multiSignature: m, pool, freshness: fresh, cache }))).to.equal(ClientErrorCode.MULTISIG_INVALID);
    }
    // a stale copy of the cached one is refused as stale
    expect(
      codeOf(() => verifyMultiSignature({ multiSignature: reordered, pool, freshness: { kind: 'current', now: TS + 1000, seconds: 300 }, cache })),
    ).to.equal(ClientErrorCode.MULTISIG_STALE);
  });

  it('a cache shared across key sets without an epoch: a cached multi-signature is still checked against the keys of the read', () => {
    const cache = new MultiSignatureCache();
    const fresh = { kind: 'current' as const, now: NOW, seconds: 300 };
    const good = multiSign(value, [0, 1, 2]);
    const noEpoch = { validatorCount: pool.validatorCount, blsKeys: pool.blsKeys };
    verifyMultiSignature({ multiSignature: good, pool: noEpoch, freshness: fresh, cache });
    // Node3 removed from the keys, the epoch still undefined: the cached multi-signature names a participant unknown now
    const withoutNode3 = { validatorCount: 3, blsKeys: new Map([...pool.blsKeys].filter(([alias]) => alias !== 'Node3')) };
    expect(codeOf(() => verifyMultiSignature({ multiSignature: good, pool: withoutNode3, freshness: fresh, cache }))).to.equal(
      ClientErrorCode.MULTISIG_UNKNOWN_PARTICIPANT,
    );
  });

  it('keeps the different honest multi-signatures of one root (each node aggregates its own n-f COMMITs), bounded per root', () => {
    const cache = new MultiSignatureCache(1024, 2);
    const fresh = { kind: 'current' as const, now: NOW, seconds: 300 };
    const byNode1 = multiSign(value, [0, 1, 2]);
    const byNode4 = multiSign(value, [1, 2, 3]);
    const byNode2 = multiSign(value, [0, 1, 3]);
    const parsed = (m: unknown): MultiSignature => verifyMultiSignature({ multiSignature: m, pool, freshness: fresh });
    verifyMultiSignature({ multiSignature: byNode1, pool, freshness: fresh, cache });
    verifyMultiSignature({ multiSignature: byNode4, pool, freshness: fresh, cache });
    expect(cache.size).to.equal(1);
    expect(cache.holds(parsed(byNode1), pool.epoch)).to.equal(true);
    expect(cache.holds(parsed(byNode4), pool.epoch)).to.equal(true);
    // a third one evicts the oldest of the root; another epoch holds none of them
    verifyMultiSignature({ multiSignature: byNode2, pool, freshness: fresh, cache });
    expect(cache.holds(parsed(byNode1), pool.epoch)).to.equal(false);
    expect(cache.holds(parsed(byNode2), pool.epoch)).to.equal(true);
    expect(cache.holds(parsed(byNode4), 'another epoch')).to.equal(false);
  });
});

describe('verifyReadReply', () => {
  it('verifies a GET_NYM reply with a reqId above 2^53, and caches the multi-signature', async () => {
    const { request, reply } = await nymFixture();
    const cache = new MultiSignatureCache();
    const v = verifyReadReply({ reply, request, pool, now: NOW, cache });
    expect(v.type).to.equal('105');
    expect(v.result.reqId).to.equal(1585221529670242337n);
    expect(cache.size).to.equal(1);
    expect(verifyReadReply({ reply, request, pool, now: NOW, cache }).root).to.equal(v.root);
  });

  it('rejects the adversarial cases with precise codes', async () => {
    const { request, reply } = await nymFixture();
    const result = reply.result as Record<string, unknown>;
    const sp = result.state_proof as Record<string, unknown>;
    const ms = sp.multi_signature as Record<string, unknown>;
    const withResult = (r: Record<string, unknown>): Record<string, unknown> => ({ op: 'REPLY', result: r });
    // tampered value
    const tampered = { ...result, data: nymReadData({ ...rec, role: '0' }, DEST) };
    expect(verifyCode({ reply: withResult(tampered), request, pool, now: NOW })).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
    // data that is not JSON, with or without a proof
    expect(verifyCode({ reply: withResult({ ...result, data: 'lie' }), request, pool, now: NOW })).to.equal(ClientErrorCode.REPLY_MALFORMED);
    const { state_proof: _sp, ...unproven } = result;
    void _sp;
    expect(verifyCode({ reply: withResult({ ...unproven, data: '{"a":' }), request, pool, now: NOW })).to.equal(ClientErrorCode.REPLY_MALFORMED);
    // claims absence of a present key
    expect(verifyCode({ reply: withResult({ ...result, data: null, seqNo: null, txnTime: null }), request, pool, now: NOW })).to.equal(
      ClientErrorCode.PROOF_VALUE_MISMATCH,
    );
    // stale multi-signature
    expect(verifyCode({ reply, request, pool, now: TS + 301 })).to.equal(ClientErrorCode.MULTISIG_STALE);
    expect(verifyCode({ reply, request, pool, now: TS + 3600, freshnessSeconds: 7200 })).to.equal(undefined);
    // too few participants
    const few = { ...sp, multi_signature: multiSign(ms.value as never, [0, 1]) };
    expect(verifyCode({ reply: withResult({ ...result, state_proof: few }), request, pool, now: NOW })).to.equal(ClientErrorCode.MULTISIG_TOO_FEW_PARTICIPANTS);
    // unknown participant
    const unknown = { ...sp, multi_signature: { ...ms, participants: ['Node1', 'Node2', 'Mallory'] } };
    expect(verifyCode({ reply: withResult({ ...result, state_proof: unknown }), request, pool, now: NOW })).to.equal(
      ClientErrorCode.MULTISIG_UNKNOWN_PARTICIPANT,
    );
    // proof for another key: a valid proof and signature of Steward1's NYM, answering for DEST
    const otherTrie = await stateWith([[nymKey(DEST), encodeNymRecord(rec)]]);
    void otherTrie;
    const forOther = { ...result, dest: 'Th7MpTaRZVRYnPiabds81Y', data: nymReadData({ ...rec, seqNo: 2 }, 'Th7MpTaRZVRYnPiabds81Y') };
    expect(verifyCode({ reply: withResult(forOther), request, pool, now: NOW })).to.equal(ClientErrorCode.REPLY_NOT_FOR_REQUEST);
    // same, with the echo also forged: the recomputed key for DEST is not what the proof proves
    const forged = { ...result, data: nymReadData({ ...rec, seqNo: 2 }, DEST) };
    expect(verifyCode({ reply: withResult(forged), request, pool, now: NOW })).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
    // the multi-signature signs another root than the proof's
    const badRoot = { ...sp, root_hash: TXN_ROOT };
    expect(verifyCode({ reply: withResult({ ...result, state_proof: badRoot }), request, pool, now: NOW })).to.equal(ClientErrorCode.MULTISIG_ROOT_MISMATCH);
    // a proof that does not lead to the signed root
    const wrongNodes = { ...sp, proof_nodes: b64encode(otherTrie.generateProof('zz')) };
    expect(verifyCode({ reply: withResult({ ...result, state_proof: wrongNodes }), request, pool, now: NOW })).to.equal(ClientErrorCode.PROOF_INVALID);
    // no proof at all: the caller falls back to f+1 replies
    const { state_proof: _dropped, ...bare } = result;
    void _dropped;
    expect(verifyCode({ reply: withResult(bare), request, pool, now: NOW })).to.equal(ClientErrorCode.NO_PROOF);
    // signed for the config ledger
    const cfg = { ...sp, multi_signature: multiSign({ ...(ms.value as Record<string, unknown>), ledger_id: 2 } as never) };
    expect(verifyCode({ reply: withResult({ ...result, state_proof: cfg }), request, pool, now: NOW })).to.equal(ClientErrorCode.MULTISIG_ROOT_MISMATCH);
  });

  it('verifies GET_ATTR (raw) and GET_SCHEMA absence and presence', async () => {
    const raw = { endpoint: { ha: '127.0.0.1:5555' } };
    const akey = attribKey(DEST, 'raw', 'endpoint');
    const skey = schemaKey(DEST, 'degree', '1.0');
    const trie = await stateWith([
      [akey, encodeWrapped(attribStoredHash('raw', raw), 7, TS)],
      [skey, encodeWrapped({ attr_names: ['name', 'age'] }, 8, TS)],
    ]);
    const ra = buildGetAttribRequest({ dest: DEST, raw: 'endpoint' });
    const attrReply = {
      op: 'REPLY',
      result: {
        ...ra.operation,
        identifier: ra.identifier,
        reqId: ra.reqId,
        data: canonicalJson(raw),
        seqNo: 7,
        txnTime: TS,
        state_proof: stateProof(trie, akey, 1, TS),
      },
    };
    expect(verifyReadReply({ reply: attrReply, request: ra, pool, now: NOW }).type).to.equal('104');
    const rs = buildGetSchemaRequest({ dest: DEST, name: 'degree', version: '1.0' });
    const schemaReply = {
      op: 'REPLY',
      result: {
        ...rs.operation,
        identifier: rs.identifier,
        reqId: rs.reqId,
        data: { attr_names: ['name', 'age'], name: 'degree', version: '1.0' },
        seqNo: 8,
        txnTime: TS,
        state_proof: stateProof(trie, skey, 1, TS),
      },
    };
    expect(verifyReadReply({ reply: schemaReply, request: rs, pool, now: NOW }).type).to.equal('107');
    const rs2 = buildGetSchemaRequest({ dest: DEST, name: 'degree', version: '2.0' });
    const absent = {
      op: 'REPLY',
      result: {
        ...rs2.operation,
        identifier: rs2.identifier,
        reqId: rs2.reqId,
        data: { name: 'degree', version: '2.0' },
        seqNo: null,
        txnTime: null,
        state_proof: stateProof(trie, schemaKey(DEST, 'degree', '2.0'), 1, TS),
      },
    };
    expect(verifyReadReply({ reply: absent, request: rs2, pool, now: NOW }).type).to.equal('107');
    // claiming the schema absent against a proof of presence
    const hidden = { op: 'REPLY', result: { ...schemaReply.result, data: { name: 'degree', version: '1.0' }, seqNo: null, txnTime: null } };
    expect(verifyCode({ reply: hidden, request: rs, pool, now: NOW })).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
  });

  it('verifies GET_TAA by the digest binding of its latest key', async () => {
    const text = 'agreement';
    const digest = taaDigest('1.0', text);
    const trie = await stateWith([['2:latest', new TextEncoder().encode(digest)]], 'config');
    const r = buildGetTxnAuthorAgreementRequest();
    const result = {
      ...r.operation,
      identifier: r.identifier,
      reqId: r.reqId,
      data: { text, version: '1.0', digest, ratification_ts: TS },
      seqNo: 3,
      txnTime: TS,
      state_proof: stateProof(trie, '2:latest', 2, TS),
    };
    expect(verifyReadReply({ reply: { op: 'REPLY', result }, request: r, pool, now: NOW }).ledgerId).to.equal(2);
    const changed = { ...result, data: { text: 'other', version: '1.0', digest, ratification_ts: TS } };
    expect(verifyCode({ reply: { op: 'REPLY', result: changed }, request: r, pool, now: NOW })).to.equal(ClientErrorCode.REPLY_MALFORMED);
  });
});

describe('the position of a verified read (seen.ts readPosition)', () => {
  it('is the same from the targets the verification proved as recomputed from the reply (GET_NYM present and absent, GET_ATTR, GET_SCHEMA, GET_TAA)', async () => {
    const { request, reply } = await nymFixture();
    const raw = { endpoint: { ha: '127.0.0.1:5555' } };
    const akey = attribKey(DEST, 'raw', 'endpoint');
    const trie = await stateWith([
      [akey, encodeWrapped(attribStoredHash('raw', raw), 7, TS)],
      [nymKey(DEST), encodeNymRecord(rec)],
    ]);
    const ra = buildGetAttribRequest({ dest: DEST, raw: 'endpoint' });
    const attrReply = {
      op: 'REPLY',
      result: {
        ...ra.operation,
        identifier: ra.identifier,
        reqId: ra.reqId,
        data: canonicalJson(raw),
        seqNo: 7,
        txnTime: TS,
        state_proof: stateProof(trie, akey, 1, TS),
      },
    };
    const absentDid = 'Th7MpTaRZVRYnPiabds81Y';
    const rn = buildGetNymRequest({ dest: absentDid });
    const absentNym = {
      op: 'REPLY',
      result: {
        ...rn.operation,
        identifier: rn.identifier,
        reqId: rn.reqId,
        data: null,
        seqNo: null,
        txnTime: null,
        state_proof: stateProof(trie, nymKey(absentDid), 1, TS),
      },
    };
    const taaTrie = await stateWith([['2:latest', new TextEncoder().encode(taaDigest('1.0', 'agreement'))]], 'config');
    const rt = buildGetTxnAuthorAgreementRequest();
    const taaReply = {
      op: 'REPLY',
      result: {
        ...rt.operation,
        identifier: rt.identifier,
        reqId: rt.reqId,
        data: { text: 'agreement', version: '1.0', digest: taaDigest('1.0', 'agreement'), ratification_ts: TS },
        seqNo: 3,
        txnTime: TS,
        state_proof: stateProof(taaTrie, '2:latest', 2, TS),
      },
    };
    const cases: [Request, unknown][] = [
      [request, reply],
      [ra, attrReply],
      [rn, absentNym],
      [rt, taaReply],
    ];
    for (const [req, rep] of cases) {
      const v = verifyReadReply({ reply: rep, request: req as never, pool, now: NOW });
      expect(v.targets).to.have.length.greaterThan(0);
      const { targets: _t, ...without } = v;
      void _t;
      const seen = new SeenLedgers();
      const fromTargets = readPosition(req, v, seen);
      const recomputed = readPosition(req, without, seen);
      expect(fromTargets).to.deep.equal(recomputed);
      expect(fromTargets).to.not.equal(undefined);
    }
    // GET_NYM: the key is the DID's state key, the seqNo the one in the proven record
    const v = verifyReadReply({ reply, request, pool, now: NOW });
    expect(readPosition(request, v, new SeenLedgers())).to.include({ key: toHex(nymKey(DEST) as Uint8Array), seqNo: 42, ledgerId: 1 });
    expect(v.targets![0]!.recordSeqNo).to.equal(42);
  });
});

describe('verifyAuditPath and GET_TXN', () => {
  const txns = Array.from({ length: 7 }, (_, i) => ({
    reqSignature: {},
    txn: { data: { dest: `D${i}`, verkey: '~x' }, metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 1585221529670242337n + BigInt(i) }, type: '1' },
    txnMetadata: { seqNo: i + 1, txnTime: TS + i },
    ver: '1',
  }));

  it('accepts the audit path of every leaf and rejects a wrong one', async () => {
    const ledger = await ledgerWith(txns);
    const rootHash = b58encode(ledger.root);
    for (let s = 1; s <= 7; s++) {
      const auditPath = (await ledger.inclusionProof(s)).map(b58encode);
      verifyAuditPath({ rootHash, seqNo: s, ledgerSize: 7, auditPath, txn: txns[s - 1]! });
      verifyAuditPath({ rootHash, seqNo: s, ledgerSize: 7, auditPath, txn: encodeMsgpack(txns[s - 1]!) });
    }
    const path3 = (await ledger.inclusionProof(3)).map(b58encode);
    expect(codeOf(() => verifyAuditPath({ rootHash, seqNo: 4, ledgerSize: 7, auditPath: path3, txn: txns[3]! }))).to.equal(
      StorageErrorCode.PROOF_ROOT_MISMATCH,
    );
    expect(codeOf(() => verifyAuditPath({ rootHash, seqNo: 3, ledgerSize: 7, auditPath: path3.slice(1), txn: txns[2]! }))).to.match(/PROOF_/);
    expect(codeOf(() => verifyAuditPath({ rootHash, seqNo: 3, ledgerSize: 7, auditPath: path3, txn: txns[4]! }))).to.equal(
      StorageErrorCode.PROOF_ROOT_MISMATCH,
    );
    expect(merkleLeafHash(encodeMsgpack(txns[0]!))).to.have.length(32);
  });

  it('verifies a GET_TXN reply by its audit path and rejects a wrong path precisely', async () => {
    const ledger = await ledgerWith(txns);
    const rootHash = b58encode(ledger.root);
    const request = buildGetTxnRequest({ ledgerId: 1, seqNo: 5 });
    const data = { ...txns[4]!, rootHash, auditPath: (await ledger.inclusionProof(5)).map(b58encode), ledgerSize: 7 };
    const ms = multiSign({ ledger_id: 1, pool_state_root_hash: POOL_STATE_ROOT, state_root_hash: TXN_ROOT, timestamp: TS, txn_root_hash: rootHash });
    const reply = parseJson(
      stringifyJson({
        op: 'REPLY',
        result: { identifier: request.identifier, reqId: request.reqId, type: '3', data, seqNo: 5, state_proof: { multi_signature: ms } },
      }),
    );
    // GET_TXN is always fresh
    expect(verifyReadReply({ reply, request, pool, now: NOW + 10_000_000 }).root).to.equal(rootHash);
    const bad = parseJson(
      stringifyJson({
        op: 'REPLY',
        result: {
          identifier: request.identifier,
          reqId: request.reqId,
          type: '3',
          data: { ...data, auditPath: (await ledger.inclusionProof(4)).map(b58encode) },
          seqNo: 5,
          state_proof: { multi_signature: ms },
        },
      }),
    );
    expect(verifyCode({ reply: bad, request, pool, now: NOW })).to.equal(ClientErrorCode.AUDIT_PATH_INVALID);
    const otherTxn = parseJson(
      stringifyJson({
        op: 'REPLY',
        result: {
          identifier: request.identifier,
          reqId: request.reqId,
          type: '3',
          data: { ...data, txn: txns[3]!.txn },
          seqNo: 5,
          state_proof: { multi_signature: ms },
        },
      }),
    );
    expect(verifyCode({ reply: otherTxn, request, pool, now: NOW })).to.equal(ClientErrorCode.AUDIT_PATH_INVALID);
    const unsigned = multiSign({ ledger_id: 1, pool_state_root_hash: POOL_STATE_ROOT, state_root_hash: TXN_ROOT, timestamp: TS, txn_root_hash: TXN_ROOT });
    const wrongRoot = parseJson(
      stringifyJson({
        op: 'REPLY',
        result: { identifier: request.identifier, reqId: request.reqId, type: '3', data, seqNo: 5, state_proof: { multi_signature: unsigned } },
      }),
    );
    expect(verifyCode({ reply: wrongRoot, request, pool, now: NOW })).to.equal(ClientErrorCode.MULTISIG_ROOT_MISMATCH);
    expect(NODE_NAMES).to.have.length(4);
  });
});

describe('same (a reply field equal as JSON to the query field)', () => {
  it('agrees with comparing the JSON texts, for any values, identical or not', () => {
    const slow = (a: unknown, b: unknown): boolean => {
      try {
        return stringifyJson(a) === stringifyJson(b);
      } catch {
        return false;
      }
    };
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constant('\uD800'),
      fc.integer(),
      fc.double(),
      fc.bigInt(),
      fc.constant(Number.NaN),
      fc.constant(Number.POSITIVE_INFINITY),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.integer(), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(value, value, fc.boolean(), (a, b, identical) => {
        const y = identical ? a : b;
        expect(same(a, y)).to.equal(slow(a, y));
      }),
      { numRuns: 2000 },
    );
  });
});
