// The parts of @quire/node the devnet uses: genesis generation, key files and the restart code.
export {
  DOMAIN_GENESIS_FILE,
  POOL_GENESIS_FILE,
  RESTART_EXIT_CODE,
  STANDARD_DOMAIN_GENESIS,
  TRUSTEE_SEED,
  deriveNodeKeys,
  nodeSeed,
  poolGenesis,
  standardDomainGenesis,
  stewardSeed,
  writeKeyFile,
} from '@quire/node';
export type { GenesisNodeSpec } from '@quire/node';
