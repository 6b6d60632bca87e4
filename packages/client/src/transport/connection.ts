/**
 * The SDK's sessions with the nodes: the one dialer of the client protocol, `NodeConnection` of
 * `@quire/network/dial` (what the tools, the benchmarks and the tests use too), with the failures the pool reports
 * as ClientError (`clientConnectionModules`), and the node addresses in the SDK's error vocabulary.
 */
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { MSG_LEN_LIMIT, IdentifierError, peerIdOfNodeDest } from '@quire/common';
import { type NodeAddress, type NodeConnectionModules, type NodeConnectionOptions, defaultNodeConnectionOptions as dialerDefaults } from '@quire/network/dial';
import { isIPv4, isIPv6 } from 'node:net';
import { ClientError, ClientErrorCode } from '../errors.js';

export { NodeConnection } from '@quire/network/dial';
export type { ConnectionMessage, ConnectionMessageListener, NodeAddress, NodeConnectionOptions } from '@quire/network/dial';

/** The PeerId string of the node whose NODE.dest is `dest` (common's `peerIdOfNodeDest`, the rule the nodes use). */
export function peerIdOfDest(dest: string): string {
  try {
    return peerIdOfNodeDest(dest);
  } catch (e) {
    if (!(e instanceof IdentifierError)) throw e;
    const length = e.data.length as number;
    throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'dest', reason: length < 0 ? 'not base58' : `decodes to ${length} bytes, not 32` });
  }
}

/** The multiaddr of a node's client listener. */
export function clientMultiaddr(addr: NodeAddress): Multiaddr {
  const proto = isIPv4(addr.host) ? 'ip4' : isIPv6(addr.host) ? 'ip6' : 'dns';
  return multiaddr(`/${proto}/${addr.host}/tcp/${addr.port}/p2p/${peerIdOfDest(addr.dest)}`);
}

/** The pool's session options: the dialer's, frames up to the protocol's limit. */
export const defaultNodeConnectionOptions: NodeConnectionOptions = { ...dialerDefaults, maxMessageLength: MSG_LEN_LIMIT + 64 };

/** The pool's sessions fail with ClientError: NODE_UNREACHABLE (data `node`, `reason`) or CLOSED. */
export const clientConnectionModules: NodeConnectionModules = {
  failure: (code, data) => new ClientError(code, data),
};
