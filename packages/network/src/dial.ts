// @quire/network/dial: what a client of the pool needs of the transport, and nothing of the validators' hosts: the
// one libp2p stack factory, the one dialer of the client protocol, and the node identities they authenticate.
// The SDK (@quire/client) imports this entry only; it loads libp2p and @quire/common, never a native binding.
import '@quire/common/polyfill';

export { NetworkError, NetworkErrorCode } from './errors.js';
export { ED25519_KEY_LENGTH, nodePrivateKeyFromSeed, peerIdFromVerkey } from './identity.js';
export { CLIENT_PING_TIMEOUT_MS, abortedError, clientYamuxOptions, createClientLibp2p, createQuireLibp2p, isAborted } from './stack.js';
export type { BaseServices, ClientLibp2pOptions, QuireLibp2pOptions } from './stack.js';
export { defaultYamuxOptions, halfWindowRuleSupported, quireYamux } from './yamux.js';
export type { YamuxOptions, YamuxWindowUpdate } from './yamux.js';
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
