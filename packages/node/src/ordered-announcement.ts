// OBSERVED_DATA{BATCH} (consensus.md §9.2): what a node publishes on the ordered-batch topic after a
// batch is ordered and durable, for observers that follow the pool without taking part in it.
import { b58encode } from '@quire/common';
import type { ConsensusEffect } from '@quire/consensus';
import type { NodeStores } from './consensus-executor.js';

export type OrderedEffect = Extract<ConsensusEffect, { kind: 'ordered' }>;

/** The topic of ordered-batch announcements of a pool. */
export function orderedTopic(poolId: string): string {
  return `/quire/${poolId}/ordered/1`;
}

/** The announcement of an ordered batch, with the committed roots of its ledger. */
export function orderedBatchAnnouncement(eff: OrderedEffect, stores: NodeStores): Record<string, unknown> {
  const lid = eff.ledgerId as 0 | 1 | 2;
  return {
    op: 'OBSERVED_DATA',
    msg_type: 'BATCH',
    msg: {
      ledgerId: eff.ledgerId,
      instId: 0,
      viewNo: eff.viewNo,
      ppSeqNo: eff.ppSeqNo,
      ppTime: eff.ppTime,
      digest: eff.digest,
      seqNoStart: eff.replies.length > 0 ? eff.replies[0]!.seqNo : 0,
      seqNoEnd: eff.replies.length > 0 ? eff.replies[eff.replies.length - 1]!.seqNo : 0,
      auditTxnRootHash: b58encode(stores.ledgers[3].root),
      stateRootHash: b58encode(stores.states[lid].committedRoot),
      txnRootHash: b58encode(stores.ledgers[lid].root),
      blsMultiSigs: eff.multiSigs.map((m) => [m.signature, m.participants, [m.value.ledger_id, m.value.state_root_hash, m.value.pool_state_root_hash, m.value.txn_root_hash, m.value.timestamp]]),
    },
  };
}
