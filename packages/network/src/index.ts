// @quire/network: libp2p transport of Quire. The node host (validators only, direct framed streams, gossip), the
// client host (any peer, pipelined request/response with pushes, limits), the one libp2p stack factory and the one
// dialer of the client protocol (also the subpath @quire/network/dial, what the SDK imports), identities derived
// from NODE.dest.
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
export { CLIENT_PING_TIMEOUT_MS, clientYamuxOptions, createClientLibp2p, createQuireLibp2p, isAborted } from './stack.js';
export type { BaseServices, ClientLibp2pOptions, QuireLibp2pOptions } from './stack.js';
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
export { ClientRequestError, NodeConnection, defaultNodeConnectionOptions } from './node-connection.js';
export type {
  ConnectOptions,
  ConnectionMessage,
  ConnectionMessageListener,
  NodeAddress,
  NodeConnectionEvents,
  NodeConnectionFailure,
  NodeConnectionModules,
  NodeConnectionOptions,
} from './node-connection.js';
