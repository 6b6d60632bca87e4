/**
 * NODE_UPGRADE ("110", config; requests.md §5.3): a node's report of its own upgrade
 * (in_progress / complete / fail). Node-originated only (clients get EXTERNAL_NODE_UPGRADE at
 * receipt). `identifier` is the node id; the inner `signature` is the node's Ed25519 signature
 * over SER(data), checked against the node id of the pool state. No authorization, no state.
 */
import { b58decodeOrUndefined, LedgerId, signingSerialization, TxnType } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { WriteHandler } from '../handler.js';
import { Limits, objectSchema, oneOf, required, signatureText, str } from '../validation/index.js';

const VALIDATOR = 'ClientNodeUpgradeOperation';

const dataSchema = objectSchema(VALIDATOR, {
  action: required(oneOf(['in_progress', 'complete', 'fail'])),
  version: required(str({ max: Limits.VERSION })),
});
const schema = objectSchema(VALIDATOR, {
  data: required(dataSchema.check),
  signature: required(signatureText),
});

export const nodeUpgradeHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.NODE_UPGRADE,
  name: 'NODE_UPGRADE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request, ctx) {
    const nodeId = request.author;
    if (ctx.state(LedgerId.POOL).get(nodeId) === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_SIGNER, { did: nodeId });
    const key = b58decodeOrUndefined(nodeId);
    const sig = b58decodeOrUndefined(request.operation.signature);
    const msg = new TextEncoder().encode(signingSerialization(request.operation.data));
    if (!key || key.length !== 32 || !sig || !ed25519Verify(key, msg, sig)) {
      throw new RequestError(RequestErrorCode.INSUFFICIENT_SIGNATURES, {
        required: 1,
        valid: 0,
        invalid: 1,
        bad: [{ did: nodeId, signature: String(request.operation.signature) }],
      });
    }
  },

  updateState() {
    // no state (formats.md 8.3)
  },
};
