/** The state: Merkle-Patricia trie with SHA3-256, its proofs and their verifiers (formats.md 7). */
export { StateTrie, defaultStateTrieOptions } from './state-trie.js';
export type { StateName, StateTrieModules, StateTrieOpenOptions, StateTrieOptions } from './state-trie.js';
export type { StateKey } from './values.js';
export { verifyTrieProofAt, verifyPrefixProof, verifyPrefixProofPairs, ProofNodeCache, PROOF_NODE_CACHE_ENTRIES, PROOF_NODE_CACHE_BYTES } from './proof.js';
export type { ProvenPair } from './proof.js';
export { BLANK_ROOT } from './node.js';
export { rlpEncode, rlpDecode } from './rlp.js';
export type { RlpItem } from './rlp.js';
