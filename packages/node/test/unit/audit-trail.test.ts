// The audit trail's delta rules for ledger roots (formats.md §10.1): a ledger that did not grow is
// written as the distance back to the audit txn holding its root, and resolves to that root; the
// executor's sizes, txn roots and state roots of one batch name the same ledgers.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { Ledger, openMemoryKvStore } from '@quire/storage';
import { AuditTrail, type NextAuditInput } from '../../src/audit-trail.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';

const A = 'A'.repeat(44);
const B = 'B'.repeat(44);
const S = 'S'.repeat(44);

function batch(ppSeqNo: number, sizes: [number, number][], roots: [number, string][], stateRoots: [number, string][]): NextAuditInput {
  return {
    ledgerId: 1,
    viewNo: 0,
    ppSeqNo,
    ppTime: 1_700_000_000 + ppSeqNo,
    digest: 'd'.repeat(64),
    sizes: new Map(sizes),
    roots: new Map(roots),
    stateRoots: new Map(stateRoots),
    primaries: ['Node1'],
    nodeReg: ['Node1', 'Node2'],
  };
}

async function emptyTrail(): Promise<{ trail: AuditTrail; ledger: Ledger }> {
  const ledger = await Ledger.open({ ledgerId: 3 }, { kv: await openMemoryKvStore() });
  return { trail: await AuditTrail.load(ledger), ledger };
}

describe('audit trail', () => {
  it('writes an unchanged ledger as a delta and resolves it to the root of the txn that holds it', async () => {
    const { trail, ledger } = await emptyTrail();
    for (const [k, domainSize] of [
      [1, 5],
      [2, 6],
      [3, 7],
    ]) {
      const rec = trail.next(
        batch(
          k,
          [
            [0, 4],
            [1, domainSize],
          ],
          [
            [0, A],
            [1, B],
          ],
          [
            [0, S],
            [1, S],
          ],
        ),
      );
      const ledgerRoot = (rec.txn as { txn: { data: { ledgerRoot: Map<number, string | number> } } }).txn.data.ledgerRoot;
      // the pool ledger is signed in the first txn only; afterwards it is 1, then 2 txns back
      expect(ledgerRoot.get(0)).to.equal(k === 1 ? A : k - 1);
      expect(rec.signed).to.deep.equal(
        k === 1
          ? [
              { ledgerId: 0, stateRoot: S, txnRoot: A },
              { ledgerId: 1, stateRoot: S, txnRoot: B },
            ]
          : [{ ledgerId: 1, stateRoot: S, txnRoot: B }],
      );
      ledger.append([rec.txn as never]);
      await ledger.commit(1);
      trail.commit(rec, b58encode(ledger.root));
    }
    expect([...trail.targets()]).to.deep.equal([
      [0, { size: 4, root: A }],
      [1, { size: 7, root: B }],
    ]);
  });

  it('refuses, with EXECUTOR_STATE, a batch that gives a ledger its size but not its roots', async () => {
    const { trail } = await emptyTrail();
    const noStateRoot = batch(
      1,
      [
        [0, 4],
        [1, 5],
      ],
      [
        [0, A],
        [1, B],
      ],
      [[1, S]],
    );
    let caught: unknown;
    try {
      trail.next(noStateRoot);
    } catch (e) {
      caught = e;
    }
    expect(caught).to.be.instanceOf(NodeError);
    expect((caught as NodeError).code).to.equal(NodeErrorCode.EXECUTOR_STATE);
    // nothing was recorded: the next complete batch is the first audit txn
    const rec = trail.next(
      batch(
        1,
        [
          [0, 4],
          [1, 5],
        ],
        [
          [0, A],
          [1, B],
        ],
        [
          [0, S],
          [1, S],
        ],
      ),
    );
    expect(rec.seqNo).to.equal(1);
  });
});
