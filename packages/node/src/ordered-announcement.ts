// OBSERVED_DATA{BATCH} (consensus.md §9.2): what a node publishes on the ordered-batch topic after a
// batch is ordered and durable, for observers that follow the pool without taking part in it. The
// message carries BATCH_COMMITTED with the batch's committed txns (as stored), the Merkle frontier
// that binds them to the multi-signed txn root, the batch's BLS multi-signatures, and the sender's
// ed25519 signature (the topic runs StrictNoSign, so the payload names and proves its sender).
import {
  type BatchCommitted,
  type MultiSigTuple,
  type ObservedBatch,
  b58encode,
  encodeMsgpack,
  integerKeyedMap,
  isPlainObject,
  observedBatchSigningInput,
  orderedBatchTopic,
} from '@quire/common';
import type { ConsensusEffect } from '@quire/consensus';
import type { Ed25519Signer } from '@quire/crypto';
import type { Ledger } from '@quire/storage';
import type { NodeStores } from './consensus-executor.js';
import { reasonOf } from './errors.js';
import type { NodeLogger } from './logger.js';

export type OrderedEffect = Extract<ConsensusEffect, { kind: 'ordered' }>;

/** The topic of ordered-batch announcements of a pool. */
export function orderedTopic(poolId: string): string {
  return orderedBatchTopic(poolId);
}

const AUDIT_LEDGER = 3;

/** The batch's own fields of its audit txn (consensus.md §3.11), deltas resolved; undefined when it cannot be read. */
interface AuditFields {
  originalViewNo: number;
  primaries: string[];
  nodeReg: string[];
  size: number | undefined;
  root: string | undefined;
  stateRoot: string | undefined;
}

function auditData(txn: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(txn) || !isPlainObject(txn.txn) || !isPlainObject(txn.txn.data)) return undefined;
  return txn.txn.data;
}

/** A list field of audit txn `seqNo`: the list, or an int delta d naming the audit txn seqNo - d that has it. */
async function auditList(audit: Ledger, seqNo: number, data: Record<string, unknown>, field: 'primaries' | 'nodeReg'): Promise<string[]> {
  const v = data[field];
  if (Array.isArray(v)) return v.map(String);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v >= seqNo) return [];
  const earlier = auditData(await audit.get(seqNo - v));
  const w = earlier?.[field];
  return Array.isArray(w) ? w.map(String) : [];
}

async function auditFields(audit: Ledger, eff: OrderedEffect): Promise<AuditFields | undefined> {
  // audit size = lastOrdered.ppSeqNo (consensus.md §3.11): the batch's audit txn has seqNo ppSeqNo
  if (eff.ppSeqNo < 1 || eff.ppSeqNo > audit.size) return undefined;
  const data = auditData(await audit.get(eff.ppSeqNo));
  if (data === undefined || data.ppSeqNo !== eff.ppSeqNo) return undefined;
  const pick = (field: string): unknown => {
    try {
      return integerKeyedMap(data[field]).get(eff.ledgerId);
    } catch {
      return undefined;
    }
  };
  const size = pick('ledgerSize');
  const root = pick('ledgerRoot');
  const stateRoot = pick('stateRoot');
  return {
    originalViewNo: typeof data.viewNo === 'number' ? data.viewNo : eff.viewNo,
    primaries: await auditList(audit, eff.ppSeqNo, data, 'primaries'),
    nodeReg: await auditList(audit, eff.ppSeqNo, data, 'nodeReg'),
    size: typeof size === 'number' ? size : undefined,
    root: typeof root === 'string' ? root : undefined,
    stateRoot: typeof stateRoot === 'string' ? stateRoot : undefined,
  };
}

/** BATCH_COMMITTED of an ordered batch, read from the committed stores, with its txns and their frontier. */
export async function batchCommitted(eff: OrderedEffect, stores: NodeStores): Promise<BatchCommitted> {
  const lid = eff.ledgerId as 0 | 1 | 2;
  const ledger = stores.ledgers[lid];
  const audit = await auditFields(stores.ledgers[AUDIT_LEDGER], eff);
  const seqNos = eff.replies.map((r) => r.seqNo);
  const seqNoEnd = audit?.size ?? (seqNos.length > 0 ? Math.max(...seqNos) : ledger.size);
  const seqNoStart = seqNos.length > 0 ? Math.min(...seqNos) : seqNoEnd + 1;
  const txns: Record<string, unknown>[] = [];
  for await (const [, txn] of ledger.range(seqNoStart, seqNoEnd)) txns.push(txn as unknown as Record<string, unknown>);
  const auditSize = Math.min(eff.ppSeqNo, stores.ledgers[AUDIT_LEDGER].size);
  const blsMultiSigs: MultiSigTuple[] = eff.multiSigs.map((m) => [
    m.signature,
    [...m.participants],
    [m.value.ledger_id, m.value.state_root_hash, m.value.pool_state_root_hash, m.value.txn_root_hash, m.value.timestamp],
  ]);
  const own = eff.multiSigs.find((m) => m.value.ledger_id === eff.ledgerId)?.value;
  return {
    ledgerId: eff.ledgerId,
    instId: 0,
    viewNo: eff.viewNo,
    originalViewNo: audit?.originalViewNo ?? eff.viewNo,
    ppSeqNo: eff.ppSeqNo,
    ppTime: eff.ppTime,
    stateRootHash: audit?.stateRoot ?? own?.state_root_hash ?? b58encode(stores.states[lid].committedRoot),
    txnRootHash: audit?.root ?? own?.txn_root_hash ?? b58encode(await ledger.rootAt(seqNoEnd)),
    auditTxnRootHash: b58encode(await stores.ledgers[AUDIT_LEDGER].rootAt(auditSize)),
    seqNoStart,
    seqNoEnd,
    primaries: audit?.primaries ?? [],
    nodeReg: audit?.nodeReg ?? [],
    digest: eff.digest,
    blsMultiSigs,
    txns,
    txnFrontier: ledger.frontierAt(seqNoStart - 1).map(b58encode),
  };
}

/** Who signs an announcement. */
export interface AnnouncementSender {
  poolId: string;
  /** the sender's alias */
  name: string;
  /** the sender's node key (`NODE.dest`) */
  signer: Ed25519Signer;
  /** largest message the transport carries (MSG_LEN_LIMIT) */
  maxMessageLength: number;
}

/**
 * The signed, encoded announcement of `msg`. When it would exceed `maxMessageLength` the txns and their frontier
 * are left out and `txnsOmitted` is set (observers then fetch seqNoStart..seqNoEnd another way).
 */
export function encodeAnnouncement(msg: BatchCommitted, sender: AnnouncementSender): Uint8Array {
  const full = encodeSigned(msg, sender);
  if (full.length <= sender.maxMessageLength || msg.txns === undefined) return full;
  const { txns: _txns, txnFrontier: _frontier, ...rest } = msg;
  return encodeSigned({ ...rest, txnsOmitted: true }, sender);
}

function encodeSigned(msg: BatchCommitted, sender: AnnouncementSender): Uint8Array {
  const announcement: ObservedBatch = {
    op: 'OBSERVED_DATA',
    msg_type: 'BATCH',
    msg,
    sender: sender.name,
    signature: sender.signer.signBase58(observedBatchSigningInput(sender.poolId, msg)),
  };
  return encodeMsgpack(announcement);
}

/**
 * Publishes one announcement per ordered batch, in the order the batches were ordered. Reading the batch from
 * the stores runs off the node's event queue; a failure is logged and the next batch is announced anyway.
 */
export class OrderedAnnouncer {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly sender: AnnouncementSender,
    private readonly stores: NodeStores,
    private readonly publish: (topic: string, data: Uint8Array) => Promise<unknown>,
    private readonly log: NodeLogger,
    /** how many peers follow the topic now; with none, nothing is read, encoded, signed or sent */
    private readonly audience: () => number = () => 1,
  ) {}

  announce(eff: OrderedEffect): void {
    if (this.audience() === 0) return;
    this.chain = this.chain.then(async () => {
      try {
        const msg = await batchCommitted(eff, this.stores);
        await this.publish(orderedTopic(this.sender.poolId), encodeAnnouncement(msg, this.sender));
      } catch (e) {
        this.log.debug({ err: reasonOf(e), ppSeqNo: eff.ppSeqNo }, 'ordered-batch announcement not published');
      }
    });
  }

  /** Resolves when every announcement asked for so far is published (or failed). */
  idle(): Promise<void> {
    return this.chain;
  }
}
