// @quire/network: libp2p transport of the validators. The node host (validators only, direct framed streams,
// gossip), the client host (any peer, pipelined request/response with pushes, limits), the stack factory of both
// hosts, identities derived from NODE.dest. Clients dial with @quire/client (its NodeConnection and stack).
// It moves bytes and knows nothing of their meaning.
import '@quire/common/polyfill';

export { NetworkError, NetworkErrorCode } from './errors.js';
export { ED25519_KEY_LENGTH, nodePrivateKeyFromSeed, peerIdFromSeed, peerIdFromVerkey } from './identity.js';
// the pure framing and envelope code lives in @quire/common (client-wire), shared with @quire/client
export { MSG_LEN_LIMIT, FrameDecoder, encodeFrame, readVarint, varintLength, writeVarint } from '@quire/common';
export type { DecodedFrame, FrameDecoderOptions } from '@quire/common';
export { TokenBucket } from './token-bucket.js';
export { backoffDelay } from '@quire/common';
export type { ObserverInfo, ValidatorInfo } from './peers.js';
export { silentLogger } from './stats.js';
export { defaultYamuxOptions, halfWindowRuleSupported, quireYamux } from './yamux.js';
export type { YamuxOptions, YamuxWindowUpdate } from './yamux.js';
export { createQuireLibp2p, isAborted } from './stack.js';
export type { BaseServices, QuireLibp2pOptions } from './stack.js';
export type { NetworkLogger, NetworkStats } from './stats.js';
export { NODE_PROTOCOL, NodeHost, defaultNodeHostOptions } from './node-host.js';
export type { NodeHostEvents, NodeHostOptions } from './node-host.js';
export type { GossipHandler, GossipMessage, GossipValidator, GossipVerdict } from './gossip.js';
export {
  CLIENT_PROTOCOL,
  ClientRefusalCode,
  ClientWireError,
  ClientWireErrorCode,
  EnvelopeKind,
  clientRefusalReason as clientErrorReason,
  decodeEnvelope,
  decodeErrorPayload,
  encodeEnvelope,
  encodeErrorPayload,
} from '@quire/common';
export type { Envelope } from '@quire/common';
export { ClientHost, defaultClientHostOptions } from './client-host.js';
export type { ClientHostEvents, ClientHostOptions, ClientInfo, Respond } from './client-host.js';
