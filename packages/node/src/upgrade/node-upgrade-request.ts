/**
 * NODE_UPGRADE ("110", requests.md §5.3, formats.md 4.5): a node's report of its own upgrade. The
 * request's `identifier` is the node id (its full verkey, NODE.dest); `operation.signature` is the
 * node's Ed25519 signature over SER(data); the request is also signed normally by the same key.
 */
import { TxnType, b58decodeOrUndefined, signatureInput, signingSerialization } from '@quire/common';
import type { Request } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import type { Ed25519Signer } from '@quire/crypto';
import { UpgradeError, UpgradeErrorCode } from './errors.js';

export const NodeUpgradeAction = {
  IN_PROGRESS: 'in_progress',
  COMPLETE: 'complete',
  FAIL: 'fail',
} as const;
export type NodeUpgradeAction = (typeof NodeUpgradeAction)[keyof typeof NodeUpgradeAction];
const ACTIONS = new Set<string>(Object.values(NodeUpgradeAction));

/** The `data` of a NODE_UPGRADE. */
export interface NodeUpgradeData {
  action: NodeUpgradeAction;
  version: string;
}

const VERSION = /^[0-9a-zA-Z.\-+!]{1,128}$/;

/** Throws UpgradeError VERSION_INVALID unless `v` is a POOL_UPGRADE version string (requests.md §5.2). */
export function checkUpgradeVersion(v: unknown): asserts v is string {
  if (typeof v !== 'string' || !VERSION.test(v)) throw new UpgradeError(UpgradeErrorCode.VERSION_INVALID, { version: v });
}

/**
 * Builds and signs a NODE_UPGRADE request with the node's key. `signer` is the node's Ed25519 key
 * (the one whose full verkey is NODE.dest); `reqId` is chosen by the caller (unique per node).
 */
export function buildNodeUpgradeRequest(signer: Ed25519Signer, data: NodeUpgradeData, reqId: number | bigint): Request {
  if (!ACTIONS.has(data.action)) throw new UpgradeError(UpgradeErrorCode.NODE_UPGRADE_ACTION_INVALID, { action: data.action });
  checkUpgradeVersion(data.version);
  const inner = { action: data.action, version: data.version };
  const request: Request = {
    identifier: signer.fullVerkey,
    reqId,
    protocolVersion: 2,
    operation: {
      type: TxnType.NODE_UPGRADE,
      data: inner,
      signature: signer.signBase58(signingSerialization(inner)),
    },
  };
  request.signature = signer.signBase58(signatureInput(request));
  return request;
}

/** True when `operation.signature` is the node `dest`'s signature over SER(operation.data). */
export function verifyNodeUpgradeSignature(operation: Record<string, unknown>, dest: string): boolean {
  const key = b58decodeOrUndefined(dest);
  const sig = typeof operation.signature === 'string' ? b58decodeOrUndefined(operation.signature) : undefined;
  if (key?.length !== 32 || sig?.length !== 64 || typeof operation.data !== 'object' || operation.data === null) return false;
  try {
    return ed25519Verify(key, new TextEncoder().encode(signingSerialization(operation.data)), sig);
  } catch {
    return false;
  }
}
