/**
 * The client's copy of the pool ledger: the NODE txns from the genesis file and from catch-up, their Merkle tree
 * (formats.md 6.2), and what follows from them (formats.md 8.1, requests.md 5.1): every node's merged record, the
 * validators (services include VALIDATOR after every update), their client addresses and usable BLS keys.
 */
import { LedgerId, b58decode, b58encode, encodeMsgpack, isPlainObject, TxnType } from '@quire/common';
import { blsVerifyPop, decodeBlsPublicKey } from '@quire/crypto';
import { GenesisError, merkleLeafHash, merkleRootOfLeafHashes, parseGenesis } from '@quire/storage/proofs';
import { ClientError, ClientErrorCode } from '../errors.js';
import { faultsTolerated, type PoolBlsKeys } from '../verify/multi-signature.js';

/** A node as the pool ledger describes it. */
export interface PoolNode {
  alias: string;
  /** NODE.dest: base58 of the node's 32-byte Ed25519 key (its libp2p identity). */
  dest: string;
  clientIp?: string;
  clientPort?: number;
  nodeIp?: string;
  nodePort?: number;
  services: string[];
  /** base58 BLS key when the record has one. */
  blskey?: string;
  /** The 48-byte BLS key when it is usable: valid point with a valid proof of possession (formats.md 9.1). */
  blsPublicKey?: Uint8Array;
  /** The merged state record (formats.md 8.1). */
  record: Record<string, unknown>;
}

function port(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 65535) return v;
  if (typeof v === 'string' && /^[0-9]{1,5}$/.test(v)) {
    const n = Number(v);
    return n > 0 && n <= 65535 ? n : undefined;
  }
  return undefined;
}

const popCache = new Map<string, Uint8Array | null>();

/** The usable BLS key of a record, or undefined (absent, BN254 128-byte key, bad point, bad proof of possession). */
function usableBlsKey(blskey: unknown, pop: unknown): Uint8Array | undefined {
  if (typeof blskey !== 'string' || typeof pop !== 'string') return undefined;
  const id = `${blskey}|${pop}`;
  let v = popCache.get(id);
  if (v === undefined) {
    try {
      const pk = decodeBlsPublicKey(blskey);
      v = blsVerifyPop(pk, b58decode(pop)) ? pk : null;
    } catch {
      v = null;
    }
    if (popCache.size > 4096) popCache.clear();
    popCache.set(id, v);
  }
  return v ?? undefined;
}

export class PoolLedger {
  private readonly txns: Record<string, unknown>[] = [];
  private readonly leaves: Uint8Array[] = [];
  private readonly records = new Map<string, Record<string, unknown>>(); // by dest, in creation order
  private root_: Uint8Array = merkleRootOfLeafHashes([]);
  private nodes_: PoolNode[] = [];
  private epoch_ = 0;
  /** the validators and their BLS view, made once per epoch (every read asks for them) */
  private view_: { epoch: number; validators: readonly PoolNode[]; bls: PoolBlsKeys } | undefined;

  /** Builds the pool ledger from the text of a pool genesis file. Throws ClientError INVALID_GENESIS. */
  static fromGenesis(text: string, file = 'pool genesis'): PoolLedger {
    let entries;
    try {
      entries = parseGenesis(text, { file, ledgerId: LedgerId.POOL });
    } catch (e) {
      if (e instanceof GenesisError) throw new ClientError(ClientErrorCode.INVALID_GENESIS, { file, reason: e.message });
      throw e;
    }
    if (entries.length === 0) throw new ClientError(ClientErrorCode.INVALID_GENESIS, { file, reason: 'no transactions' });
    const ledger = new PoolLedger();
    ledger.appendEncoded(entries.map((e) => ({ txn: e.txn, encoded: e.encoded })));
    if (ledger.validators().length === 0) throw new ClientError(ClientErrorCode.INVALID_GENESIS, { file, reason: 'no validator node' });
    return ledger;
  }

  get size(): number {
    return this.txns.length;
  }

  get root(): Uint8Array {
    return this.root_;
  }

  get rootBase58(): string {
    return b58encode(this.root_);
  }

  /** Grows whenever the txns change; keys verification caches. */
  get epoch(): number {
    return this.epoch_;
  }

  /** The txn with `seqNo` (1-based). */
  txn(seqNo: number): Record<string, unknown> | undefined {
    return this.txns[seqNo - 1];
  }

  /** Every node of the ledger (validators and demoted ones), in creation order. */
  nodes(): readonly PoolNode[] {
    return this.nodes_;
  }

  /** The validators and the BLS view of this epoch. */
  private view(): { validators: readonly PoolNode[]; bls: PoolBlsKeys } {
    const v = this.view_;
    if (v !== undefined && v.epoch === this.epoch_) return v;
    const validators = this.nodes_.filter((n) => n.services.includes('VALIDATOR'));
    const blsKeys = new Map<string, Uint8Array>();
    for (const n of validators) if (n.blsPublicKey !== undefined) blsKeys.set(n.alias, n.blsPublicKey);
    const made = { epoch: this.epoch_, validators, bls: { validatorCount: validators.length, blsKeys, epoch: this.epoch_ } };
    this.view_ = made;
    return made;
  }

  /** Nodes whose services include VALIDATOR (a new array each call). */
  validators(): PoolNode[] {
    return [...this.view().validators];
  }

  get f(): number {
    return faultsTolerated(this.view().validators.length);
  }

  /** The BLS view used to verify multi-signatures: one object per epoch, not to be changed. */
  blsKeys(): PoolBlsKeys {
    return this.view().bls;
  }

  /** The root the tree would have after appending `txns` (for checking catch-up replies before applying them). */
  leafHashes(txns: readonly Record<string, unknown>[]): Uint8Array[] {
    return txns.map((t) => merkleLeafHash(encodeMsgpack(t)));
  }

  rootWith(extraLeaves: readonly Uint8Array[]): Uint8Array {
    return merkleRootOfLeafHashes([...this.leaves, ...extraLeaves]);
  }

  /** Appends txns that follow the current size (their txnMetadata.seqNo must continue it). */
  append(txns: readonly Record<string, unknown>[]): void {
    this.appendEncoded(txns.map((txn) => ({ txn, encoded: encodeMsgpack(txn) })));
  }

  private appendEncoded(items: readonly { txn: Record<string, unknown>; encoded: Uint8Array }[]): void {
    for (const { txn, encoded } of items) {
      const meta = txn.txnMetadata;
      const seqNo = isPlainObject(meta) ? meta.seqNo : undefined;
      if (seqNo !== this.txns.length + 1)
        throw new ClientError(ClientErrorCode.CATCHUP_FAILED, { reason: 'txn out of sequence', expected: this.txns.length + 1, actual: String(seqNo) });
      this.txns.push(txn);
      this.leaves.push(merkleLeafHash(encoded));
      this.applyNodeTxn(txn);
    }
    this.root_ = merkleRootOfLeafHashes(this.leaves);
    this.nodes_ = [...this.records.entries()].map(([dest, rec]) => toPoolNode(dest, rec));
    this.epoch_++;
  }

  private applyNodeTxn(txn: Record<string, unknown>): void {
    const inner = txn.txn;
    if (!isPlainObject(inner) || inner.type !== TxnType.NODE || !isPlainObject(inner.data)) return;
    const dest = inner.data.dest;
    if (typeof dest !== 'string') return;
    let rec = this.records.get(dest);
    if (rec === undefined) {
      const meta = inner.metadata;
      rec = { identifier: isPlainObject(meta) && typeof meta.from === 'string' ? meta.from : null };
      this.records.set(dest, rec);
    }
    const data = inner.data.data;
    if (isPlainObject(data)) for (const [k, v] of Object.entries(data)) rec[k] = v;
  }
}

function toPoolNode(dest: string, rec: Record<string, unknown>): PoolNode {
  const services = Array.isArray(rec.services) ? rec.services.filter((s): s is string => typeof s === 'string') : [];
  const node: PoolNode = { alias: typeof rec.alias === 'string' ? rec.alias : dest, dest, services, record: rec };
  if (typeof rec.client_ip === 'string') node.clientIp = rec.client_ip;
  if (typeof rec.node_ip === 'string') node.nodeIp = rec.node_ip;
  const cp = port(rec.client_port);
  if (cp !== undefined) node.clientPort = cp;
  const np = port(rec.node_port);
  if (np !== undefined) node.nodePort = np;
  if (typeof rec.blskey === 'string') node.blskey = rec.blskey;
  const pk = usableBlsKey(rec.blskey, rec.blskey_pop);
  if (pk !== undefined) node.blsPublicKey = pk;
  return node;
}
