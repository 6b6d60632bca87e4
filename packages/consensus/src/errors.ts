// Errors of the consensus package. Codes are stable strings; tests assert on them.
import { QuireError } from '@quire/common';

export const ConsensusErrorCode = {
  /** A peer message is not a map, has an unknown op, or a field has the wrong type or range. */
  INVALID_MESSAGE: 'CONSENSUS_INVALID_MESSAGE',
  /** Options are inconsistent (e.g. LOG_SIZE not above CHK_FREQ, empty validator list). */
  INVALID_OPTIONS: 'CONSENSUS_INVALID_OPTIONS',
  /** The executor reported a state that contradicts what consensus recorded (local corruption). */
  EXECUTOR_MISMATCH: 'CONSENSUS_EXECUTOR_MISMATCH',
  /** The simulator, a stand-in or a simulation world was misused or reached a state it cannot be in (data: reason). */
  SIMULATION: 'CONSENSUS_SIMULATION',
} as const;
export type ConsensusErrorCode = (typeof ConsensusErrorCode)[keyof typeof ConsensusErrorCode];

export class ConsensusError extends QuireError {
  declare readonly code: ConsensusErrorCode;
  constructor(code: ConsensusErrorCode, data: Record<string, unknown> = {}) {
    super(code, data);
  }
}
