// The pure entry of @quire/storage (`@quire/storage/proofs`): what a light client and the consensus
// core need to check what nodes send them (Merkle hashing, inclusion and consistency proofs, state
// trie proofs, the shape of a stored multi-signature, pool genesis parsing) and the errors these
// raise. Nothing imported from here opens a database or loads LevelDB's native binding; the main
// entry (`@quire/storage`) adds the stores.
export { StorageError, StorageErrorCode, ProofError, ConsistencyError, ValueError } from './errors.js';
export type { StorageErrorData, StorageErrorArgs } from './errors.js';
export {
  EMPTY_ROOT,
  HASH_LENGTH,
  merkleLeafHash,
  merkleNodeHash,
  merkleRootAfterAppend,
  merkleRootOfLeafHashes,
  rootFromFrontier,
  verifyInclusion,
  verifyConsistency,
} from './ledger/merkle.js';
export {
  verifyTrieProofAt,
  verifyPrefixProof,
  verifyPrefixProofPairs,
  ProofNodeCache,
  PROOF_NODE_CACHE_ENTRIES,
  PROOF_NODE_CACHE_BYTES,
} from './state/proof.js';
export { multiSignatureProblem } from './side-stores/bls-store.js';
export { GenesisError, GenesisErrorCode } from './genesis/genesis-error.js';
export { parseGenesis } from './genesis/parse-genesis.js';
export type { GenesisEntry, ParseGenesisOptions } from './genesis/parse-genesis.js';
