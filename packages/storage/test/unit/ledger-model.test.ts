import { expect } from 'chai';
import fc from 'fast-check';
import { encodeMsgpack } from '@quire/common';
import { Ledger, openMemoryKvStore, verifyConsistency, verifyInclusion, type WriteBatch } from '../../src/index.js';
import { mkTxns } from './ledger-helpers.js';
import { hex, mth, modelLeaf } from './merkle-model.js';

type Cmd = { op: 'append'; n: number } | { op: 'commit'; pick: number; own: boolean } | { op: 'discard'; pick: number } | { op: 'flush' } | { op: 'reopen' };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('append' as const), n: fc.integer({ min: 0, max: 12 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('commit' as const), pick: fc.nat(1000), own: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('discard' as const), pick: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('flush' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reopen' as const) }) },
);

describe('Ledger uncommitted tail against a model (property)', () => {
  it('append / commit / discard / write / reopen sequences agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 50 }), async (cmds) => {
        const kv = await openMemoryKvStore();
        try {
          let ledger = await Ledger.open({ ledgerId: 1 }, { kv });
          const leaves: Uint8Array[] = []; // model: every txn, committed first
          let committed = 0;
          let pending: WriteBatch[] = [];
          let counter = 0;
          const flush = async (): Promise<void> => {
            for (const b of pending) await b.write();
            pending = [];
          };
          for (const c of cmds) {
            const tail = leaves.length - committed;
            if (c.op === 'append') {
              const txns = mkTxns(++counter * 1000, c.n);
              const r = ledger.append(txns);
              for (const t of txns) leaves.push(modelLeaf(encodeMsgpack(t)));
              expect(r.last).to.equal(leaves.length);
              expect(hex(r.root)).to.equal(hex(mth(leaves)));
            } else if (c.op === 'commit') {
              const k = c.pick % (tail + 1);
              if (c.own) {
                await flush(); // batches are written in the order of their commits
                await ledger.commit(k);
              } else {
                const b = kv.batch();
                ledger.commit(k, b);
                pending.push(b);
              }
              committed += k;
            } else if (c.op === 'discard') {
              const k = c.pick % (tail + 1);
              ledger.discard(k);
              leaves.length -= k;
            } else if (c.op === 'flush') {
              await flush();
            } else {
              await flush();
              ledger = await Ledger.open({ ledgerId: 1 }, { kv });
              leaves.length = committed;
            }
            expect(ledger.size).to.equal(committed);
            expect(ledger.uncommittedSize).to.equal(leaves.length);
            expect(hex(ledger.root)).to.equal(hex(mth(leaves.slice(0, committed))));
            expect(hex(ledger.uncommittedRoot)).to.equal(hex(mth(leaves)));
          }
          // every stored or pending leaf is provable at every size
          const n = leaves.length;
          for (let m = 1; m <= n; m = m * 2 + 1) {
            const rootM = await ledger.rootAt(m);
            expect(hex(rootM)).to.equal(hex(mth(leaves.slice(0, m))));
            verifyInclusion(leaves[m - 1]!, m - 1, n, await ledger.inclusionProof(m, n), ledger.uncommittedRoot);
            verifyConsistency(m, n, rootM, ledger.uncommittedRoot, await ledger.consistencyProof(m, n));
          }
          for (let i = 1; i <= n; i++) expect(hex(modelLeaf((await ledger.getEncoded(i))!)), `txn ${i}`).to.equal(hex(leaves[i - 1]!));
          await flush();
          // the log and the hash store agree record for record
          const reopened = await Ledger.open({ ledgerId: 1, verify: true }, { kv });
          expect(reopened.recovery.repairedRecords).to.equal(0);
          expect(reopened.size).to.equal(committed);
          expect(hex(reopened.root)).to.equal(hex(mth(leaves.slice(0, committed))));
        } finally {
          await kv.close();
        }
      }),
      { numRuns: 100 },
    );
  });
});
