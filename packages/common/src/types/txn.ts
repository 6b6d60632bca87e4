/** Stored transaction layout (formats.md 4.1, 10.1). */
import type { TaaAcceptance } from './request.js';

export const SignatureType = {
  ED25519: 'ED25519',
  ED25519_MULTI: 'ED25519_MULTI',
} as const;
export type SignatureType = (typeof SignatureType)[keyof typeof SignatureType];

export interface SignatureValue {
  from: string;
  value: string;
}

/** `{}` for unsigned txns (genesis, audit); genesis files may hold other contents, stored as given. */
export interface ReqSignature {
  type?: string;
  values?: SignatureValue[];
}

export interface TxnPayloadMetadata {
  /** The request's `identifier` (absent when the request had none, and in most genesis txns). */
  from?: string;
  reqId?: number | bigint;
  digest?: string;
  payloadDigest?: string;
  endorser?: string;
  taaAcceptance?: TaaAcceptance;
  [field: string]: unknown;
}

export interface TxnPayload {
  type: string;
  protocolVersion?: number;
  /** Payload version, written only when given in `operation.ver` or above "1" by default (kept with its JSON type). */
  ver?: string | number;
  data: Record<string, unknown>;
  metadata: TxnPayloadMetadata;
}

export interface TxnMetadata {
  seqNo?: number;
  /** Batch (PRE-PREPARE) time in seconds; absent in genesis txns. */
  txnTime?: number;
  txnId?: string;
}

/** A stored transaction. Fields that are absent are omitted, never null. */
export interface Txn {
  ver: string;
  txn: TxnPayload;
  txnMetadata: TxnMetadata;
  reqSignature: ReqSignature;
}

/** `txn.data` of an AUDIT txn (formats.md 10.1) with its integer-keyed maps. */
export interface AuditTxnData {
  ver: string;
  viewNo: number;
  ppSeqNo: number;
  ledgerSize: Map<number, number>;
  /** base58 root, or an integer delta to the audit txn holding it. */
  ledgerRoot: Map<number, string | number>;
  stateRoot: Map<number, string>;
  primaries: string[] | number;
  nodeReg?: string[] | number;
  digest: string;
}
