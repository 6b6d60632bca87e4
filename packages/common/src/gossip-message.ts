/**
 * The message rules of Quire's unsigned gossip topics, one definition for the validators' hosts (@quire/network) and
 * the observers' transport (@quire/client), which share no package but this one. A message is not signed by the gossip
 * envelope (StrictNoSign: each payload carries its own proofs, the sender's signature and the multi-signature), so its
 * id is the SHA-256 of its data: the id that IHAVE and IWANT name and that deduplicates, the same on both sides. A
 * peer's inbound gossip frame may hold up to four messages of the largest size plus the RPC's framing.
 */
import { sha256 } from './hash.js';

/** The gossipsub message id of a message of an unsigned topic: SHA-256 of its data. */
export function gossipMessageId(message: { data: Uint8Array }): Uint8Array {
  return sha256(message.data);
}

/** The largest inbound gossipsub RPC accepted from a peer, for messages of at most `maxMessageLength` bytes. */
export function gossipInboundLimit(maxMessageLength: number): number {
  return maxMessageLength * 4 + 4096;
}
