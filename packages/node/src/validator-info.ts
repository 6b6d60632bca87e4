// VALIDATOR_INFO (requests.md §7.5): what one node reports about itself to an authorized caller,
// in the sections the spec names (node, pool, protocol, software, hardware, configuration).
import { availableParallelism, freemem, totalmem } from 'node:os';
import { b58encode } from '@quire/common';
import type { ConsensusCore } from '@quire/consensus';
import type { NodeConfig } from './config.js';
import type { NodeStores } from './consensus-executor.js';

export interface ValidatorInfoSource {
  name: string;
  dest: string;
  version: string;
  poolId: string;
  startedAt: number;
  core: ConsensusCore;
  stores: NodeStores;
  config: NodeConfig;
  clientSessions: number;
}

export function validatorInfo(s: ValidatorInfoSource): Record<string, unknown> {
  const st = s.core.status();
  const ledger = (l: 0 | 1 | 2 | 3) => ({ size: s.stores.ledgers[l].size, root: b58encode(s.stores.ledgers[l].root) });
  return {
    node: {
      alias: s.name,
      dest: s.dest,
      uptimeSec: Math.floor((Date.now() - s.startedAt) / 1000),
      mode: st.catchingUp ? 'catching-up' : st.waitingForNewView ? 'view-change' : 'participating',
      clientSessions: s.clientSessions,
    },
    pool: { poolId: s.poolId, validators: st.validators, primary: st.primary, viewNo: st.viewNo, isPrimary: st.isPrimary },
    protocol: {
      lastOrdered: st.lastOrdered,
      stableCheckpoint: st.stableCheckpoint,
      pendingRequests: st.pendingRequests,
      ledgers: { pool: ledger(0), domain: ledger(1), config: ledger(2), audit: ledger(3) },
    },
    software: { 'quire-node': s.version, node: process.version },
    hardware: { cpus: availableParallelism(), memoryBytes: totalmem(), freeMemoryBytes: freemem(), rssBytes: process.memoryUsage().rss },
    configuration: { consensus: s.config.consensus, limits: s.config.limits, durable: s.config.durable },
  };
}
