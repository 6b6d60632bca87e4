import type { PeerId } from '@libp2p/interface';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { peerIdObjectFromVerkey } from './identity.js';

/** A validator of the pool as the node host needs it: alias, `NODE.dest`, node address. */
export interface ValidatorInfo {
  name: string;
  /** base58 32-byte ed25519 verkey (`NODE.dest`); the PeerId is derived from it. */
  dest: string;
  host: string;
  port: number;
}

/** A peer admitted to the node host (e.g. to follow gossip) that is not dialed and cannot send direct messages. */
export interface ObserverInfo {
  name: string;
  dest: string;
}

export interface ResolvedPeer {
  name: string;
  dest: string;
  peerId: PeerId;
  peerIdStr: string;
}

/** Checks and resolves a validator or observer list; throws INVALID_PEER_INFO, INVALID_VERKEY or DUPLICATE_PEER. */
export function resolvePeers<T extends ObserverInfo>(list: readonly T[], withAddress: boolean): (T & ResolvedPeer)[] {
  if (!Array.isArray(list)) throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { field: 'list' });
  const names = new Set<string>();
  const keys = new Set<string>();
  return list.map((p) => {
    if (p === null || typeof p !== 'object') throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { field: 'entry' });
    if (typeof p.name !== 'string' || p.name.length === 0) throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { name: p.name, field: 'name' });
    if (typeof p.dest !== 'string') throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { name: p.name, field: 'dest' });
    if (withAddress) {
      const v = p as unknown as ValidatorInfo;
      if (typeof v.host !== 'string' || v.host.length === 0) throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { name: p.name, field: 'host' });
      if (!Number.isInteger(v.port) || v.port < 1 || v.port > 65535)
        throw new NetworkError(NetworkErrorCode.INVALID_PEER_INFO, { name: p.name, field: 'port' });
    }
    const peerId = peerIdObjectFromVerkey(p.dest);
    const peerIdStr = peerId.toString();
    if (names.has(p.name) || keys.has(peerIdStr)) throw new NetworkError(NetworkErrorCode.DUPLICATE_PEER, { name: p.name });
    names.add(p.name);
    keys.add(peerIdStr);
    return { ...p, peerId, peerIdStr };
  });
}
