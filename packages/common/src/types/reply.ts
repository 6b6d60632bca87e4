/** Client replies (formats.md 5.x) and BLS multi-signatures (9.2). */
import type { Txn } from './txn.js';

/** The value a BLS multi-signature signs: MP(value) (formats.md 9.2). */
export interface MultiSignatureValue {
  ledger_id: number;
  pool_state_root_hash: string;
  state_root_hash: string;
  timestamp: number;
  txn_root_hash: string;
}

export interface MultiSignature {
  /** base58 of the 96-byte compressed aggregate G2 signature. */
  signature: string;
  /** Aliases of the signing validators (order irrelevant). */
  participants: string[];
  value: MultiSignatureValue;
}

export interface StateProof {
  /** base58 state root (absent in GET_TXN replies). */
  root_hash?: string;
  /** base64 RLP list of trie nodes (absent in GET_TXN replies). */
  proof_nodes?: string;
  multi_signature: MultiSignature;
}

export interface ReqAck {
  op: 'REQACK';
  identifier: string;
  reqId: number | bigint;
}

export interface ReqNack {
  op: 'REQNACK';
  identifier: string;
  reqId: number | bigint;
  reason: string;
  code?: number | null;
}

export interface Reject {
  op: 'REJECT';
  identifier: string;
  reqId: number | bigint;
  reason: string;
  code: number | null;
}

/** Result of a write REPLY: the stored txn plus its ledger root and audit path at size seqNo. */
export type WriteResult = Txn & { rootHash: string; auditPath: string[] };

/** Result of a read REPLY: the operation's fields plus the answer (formats.md 5.3). */
export interface ReadResult {
  type: string;
  identifier: string;
  reqId: number | bigint;
  data: unknown;
  seqNo?: number | null;
  txnTime?: number | null;
  state_proof?: StateProof;
  [field: string]: unknown;
}

/** `data` of a GET_TXN result when the txn exists. */
export type GetTxnData = Txn & { rootHash: string; auditPath: string[]; ledgerSize: number };

export interface WriteReply {
  op: 'REPLY';
  result: WriteResult;
}

export interface ReadReply {
  op: 'REPLY';
  result: ReadResult;
}

export type Reply = WriteReply | ReadReply;
export type ClientReply = ReqAck | ReqNack | Reject | Reply;

/** REJECT / REQNACK codes (formats.md 5.4). Other rejections carry no code. */
export const RejectCode = {
  TAA_NOT_EXPECTED_FOR_LEDGER: 200,
  TAA_MISSING: 201,
  TAA_WRONG_DIGEST: 202,
  TAA_RETIRED: 203,
  TAA_TOO_PRECISE: 204,
  TAA_TIME_INAPPROPRIATE: 205,
  TAA_MECHANISM_INAPPROPRIATE: 206,
  TAA_TIME_OUT_OF_RANGE: 207,
} as const;
export type RejectCode = (typeof RejectCode)[keyof typeof RejectCode];

/** Reason text templates of the coded rejections; `{}` placeholders are filled in order by rejectReason. */
export const REJECT_REASON_TEMPLATES: Readonly<Record<RejectCode, string>> = {
  200: 'Txn Author Agreement acceptance is not expected and not allowed in requests for ledger id {}',
  201: 'Txn Author Agreement acceptance is required for ledger with id {}',
  202: 'Incorrect Txn Author Agreement(digest={}) in the request',
  203: 'Txn Author Agreement is retired: version {}, seq_no {}, txn_time {}',
  204: 'Txn Author Agreement acceptance time {} is too precise and is a privacy risk',
  205: 'Txn Author Agreement acceptance time is inappropriate: provided {}, expected in [{}, {}]',
  206: 'Txn Author Agreement acceptance mechanism is inappropriate: provided {}, expected one of {}',
  207: 'TAA_ACCEPTANCE_TIME = {} is out of range',
};
