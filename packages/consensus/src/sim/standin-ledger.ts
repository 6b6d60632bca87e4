// Hash-chained ledgers of the stand-in executor: root_i = SHA-256(root_{i-1} | SHA-256(txn_i)), so
// equal roots mean equal histories; a "consistency proof" from size a to b is the leaf hashes of
// txns a+1..b, checked by chaining them onto the old root.
import { b58encode, sha256 } from '@quire/common';

export const EMPTY_ROOT = b58encode(sha256(new Uint8Array(0)));

export function leafHash(item: string): string {
  return b58encode(sha256(item));
}

export function chainHashed(prev: string, leaf: string): string {
  return b58encode(sha256(`${prev}|${leaf}`));
}

export function chain(prev: string, item: string): string {
  return chainHashed(prev, leafHash(item));
}

/** One ledger of the stand-in: txns, the root after each size, and how many are committed. */
export class ChainLedger {
  readonly txns: string[] = [];
  /** roots[i] = root after i txns */
  readonly roots: string[] = [EMPTY_ROOT];
  committed = 0;

  get size(): number {
    return this.txns.length;
  }
  get root(): string {
    return this.roots[this.txns.length];
  }
  append(txn: string): void {
    const next = chain(this.root, txn);
    this.txns.push(txn);
    this.roots.push(next);
  }
  truncate(size: number): void {
    this.txns.length = size;
    this.roots.length = size + 1;
  }
}
