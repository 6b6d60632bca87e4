// The rule that keeps a pool handle's reads from going back in time (src/pool/seen.ts), against a model ledger:
// batches with non-decreasing ppTime (often several in one second), some of them freshness batches that re-sign
// an unchanged root, the client's own writes acknowledged once the pool has ordered them, and reads answered by
// nodes at any point of the ledger up to its head.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  buildAttribRequest,
  buildCredDefRequest,
  buildGetAttribRequest,
  buildGetCredDefRequest,
  buildGetNymRequest,
  buildGetSchemaRequest,
  buildNymRequest,
  buildSchemaRequest,
  readTargets,
} from '../../src/index.js';
import { SeenLedgers, writeKey, writePosition, type ReadPosition } from '../../src/pool/seen.js';
import { toHex } from '@quire/common';

const SUBMITTER = 'V4SGRU86Z58d6TV7PBUe6f';
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';

interface Batch {
  time: number;
  /** the key the batch's one txn sets (seqNo = batch index + 1), or null for a freshness batch */
  key: number | null;
}

/** The model: batch i (0-based) has seqNo i+1 when it holds a txn. */
class Model {
  constructor(readonly batches: Batch[]) {}

  /** The last batch <= j that holds a txn (the state's identity), -1 for the genesis state. */
  lastTxn(j: number): number {
    for (let i = j; i >= 0; i--) if (this.batches[i]!.key !== null) return i;
    return -1;
  }

  /** seqNo of key k's value in the state after batch j, null when absent. */
  valueSeqNo(k: number, j: number): number | null {
    for (let i = j; i >= 0; i--) if (this.batches[i]!.key === k) return i + 1;
    return null;
  }

  /** What a node whose head is batch j answers for key k: its root, the multi-signature of batch j. */
  read(k: number, j: number): ReadPosition {
    return { ledgerId: 1, timestamp: this.batches[j]!.time, root: `r${this.lastTxn(j)}`, key: `k${k}`, seqNo: this.valueSeqNo(k, j) };
  }
}

const KEYS = 4;

const batchesArb = fc
  .array(fc.record({ step: fc.constantFrom(0, 0, 0, 1, 2), key: fc.option(fc.integer({ min: 0, max: KEYS - 1 }), { freq: 4 }) }), {
    minLength: 1,
    maxLength: 25,
  })
  .map((xs) => {
    let t = 1_700_000_000;
    return xs.map((x) => ({ time: (t += x.step), key: x.key }));
  });

type Op = { kind: 'advance' } | { kind: 'ack'; back: number } | { kind: 'read'; key: number; back: number };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ kind: 'advance' as const }),
  fc.record({ kind: fc.constant('ack' as const), back: fc.nat(5) }),
  fc.record({ kind: fc.constant('read' as const), key: fc.integer({ min: 0, max: KEYS - 1 }), back: fc.nat(6) }),
);

describe('SeenLedgers (read your writes, monotonic reads)', () => {
  it('never accepts a value older than one the handle wrote or read, nor a state older than a second it saw; the head is always accepted', () => {
    fc.assert(
      fc.property(batchesArb, fc.array(opArb, { maxLength: 60 }), (batches, ops) => {
        const m = new Model(batches);
        const seen = new SeenLedgers();
        let head = 0;
        /** per key: the newest seqNo the client wrote or read */
        const floor = new Map<number, number>();
        /** the newest batch time the client saw (acked write, accepted read) */
        let seenTime = -1;
        for (const op of ops) {
          if (op.kind === 'advance') head = Math.min(head + 1, batches.length - 1);
          else if (op.kind === 'ack') {
            // the ack of one of the client's writes already ordered (acks may come late)
            const j = Math.max(0, head - op.back);
            const b = batches[j]!;
            if (b.key === null) continue;
            seen.noteWrite({ ledgerId: 1, time: b.time, seqNo: j + 1, key: `k${b.key}` });
            floor.set(b.key, Math.max(floor.get(b.key) ?? 0, j + 1));
            seenTime = Math.max(seenTime, b.time);
          } else {
            const j = Math.max(0, head - op.back);
            const p = m.read(op.key, j);
            const behind = seen.check(p);
            // the head node is never behind what the client saw
            if (j === head) expect(behind, `head read of k${op.key} at batch ${j}`).to.equal(undefined);
            if (behind !== undefined) continue;
            // accepted: the key's value is not older than the client wrote or read it
            const want = floor.get(op.key);
            if (want !== undefined) expect(p.seqNo ?? 0, `k${op.key} read at batch ${j}`).to.be.at.least(want);
            // and the state holds every batch of a time before the newest time seen
            const lastBefore = batches.findLastIndex((b) => b.time < seenTime && b.key !== null);
            expect(m.lastTxn(j), `state at batch ${j} vs time ${seenTime}`).to.be.at.least(lastBefore);
            seen.noteRead(p);
            if (p.seqNo !== null) floor.set(op.key, Math.max(floor.get(op.key) ?? 0, p.seqNo));
            seenTime = Math.max(seenTime, p.timestamp);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps its memory bounded: the keys of one second at most', () => {
    const seen = new SeenLedgers();
    for (let i = 0; i < 10_000; i++) seen.noteWrite({ ledgerId: 1, time: 1_700_000_000, seqNo: i + 1, key: `k${i}` });
    // the oldest keys were dropped; the newest still hold
    expect(seen.check({ ledgerId: 1, timestamp: 1_700_000_000, root: 'r', key: 'k9999', seqNo: 9_999 })).to.not.equal(undefined);
    expect(seen.check({ ledgerId: 1, timestamp: 1_700_000_000, root: 'r', key: 'k0', seqNo: null })).to.equal(undefined);
    // a newer second forgets the keys of the older one (its state holds them)
    seen.noteWrite({ ledgerId: 1, time: 1_700_000_001, seqNo: 10_001 });
    expect(seen.check({ ledgerId: 1, timestamp: 1_700_000_001, root: 'r', key: 'k9999', seqNo: null })).to.equal(undefined);
    expect(seen.check({ ledgerId: 1, timestamp: 1_700_000_000, root: 'r', key: 'k9999', seqNo: 9_999 })).to.not.equal(undefined);
    expect(seen.seen(1)).to.deep.equal({ time: 1_700_000_001, seqNo: 10_001 });
    expect(seen.seen(2)).to.equal(undefined);
  });

  it('derives the state key of a write as the read of it proves it (NYM, ATTRIB, SCHEMA, CLAIM_DEF)', () => {
    const keyOfRead = (op: Record<string, unknown>): string => {
      const k = readTargets({ type: op.type, data: null }, op).targets[0]!.key;
      return toHex(typeof k === 'string' ? new TextEncoder().encode(k) : k);
    };
    expect(writeKey(buildNymRequest({ submitter: SUBMITTER, dest: DEST }))).to.equal(keyOfRead(buildGetNymRequest({ dest: DEST }).operation));
    expect(writeKey(buildAttribRequest({ submitter: SUBMITTER, dest: DEST, raw: { endpoint: { ha: '127.0.0.1:5555' } } }))).to.equal(
      keyOfRead(buildGetAttribRequest({ dest: DEST, raw: 'endpoint' }).operation),
    );
    expect(writeKey(buildSchemaRequest({ submitter: SUBMITTER, name: 'degree', version: '1.0', attrNames: ['name'] }))).to.equal(
      keyOfRead(buildGetSchemaRequest({ dest: SUBMITTER, name: 'degree', version: '1.0' }).operation),
    );
    expect(writeKey(buildCredDefRequest({ submitter: SUBMITTER, ref: 7, tag: 't', data: { primary: { n: '1' } } }))).to.equal(
      keyOfRead(buildGetCredDefRequest({ origin: SUBMITTER, ref: 7, tag: 't' }).operation),
    );
    const w = writePosition(buildNymRequest({ submitter: SUBMITTER, dest: DEST }), { txnMetadata: { seqNo: 43, txnTime: 1_700_000_000 } });
    expect(w).to.deep.equal({ ledgerId: 1, time: 1_700_000_000, seqNo: 43, key: writeKey(buildNymRequest({ submitter: SUBMITTER, dest: DEST })) });
    // a reply without txnMetadata teaches nothing
    expect(writePosition(buildNymRequest({ submitter: SUBMITTER, dest: DEST }), {})).to.equal(undefined);
  });
});
