/**
 * The addresses the SDK dials: a node's client listener (or, for an observer, its node listener) and the PeerId that
 * authenticates it, derived from NODE.dest by common's rule (the nodes' too), in the SDK's error vocabulary.
 */
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { IdentifierError, peerIdOfNodeDest } from '@quire/common';
import { isIPv4, isIPv6 } from 'node:net';
import { ClientError, ClientErrorCode } from '../errors.js';

/** A node's listener: its alias, `NODE.dest` (the node is authenticated by that key through Noise), address. */
export interface NodeAddress {
  alias: string;
  dest: string;
  host: string;
  port: number;
}

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

/** The multiaddr of a node's listener, ending with its PeerId (IPv4, IPv6 or a DNS name). */
export function clientMultiaddr(addr: NodeAddress): Multiaddr {
  const proto = isIPv4(addr.host) ? 'ip4' : isIPv6(addr.host) ? 'ip6' : 'dns';
  return multiaddr(`/${proto}/${addr.host}/tcp/${addr.port}/p2p/${peerIdOfDest(addr.dest)}`);
}
