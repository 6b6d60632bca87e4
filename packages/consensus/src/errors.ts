// Errors of the consensus package. Codes are stable strings; tests assert on them.
import { CodedError } from '@quire/common';
import type { ConsensusOptions } from './options.js';

export const ConsensusErrorCode = {
  /**
   * A peer message is not a map, has an unknown op, or a field has the wrong type or range (data: `op`, the message's
   * op cut to 40 characters or null when it has none; `field`, the first field refused).
   */
  INVALID_MESSAGE: 'CONSENSUS_INVALID_MESSAGE',
  /**
   * Options are inconsistent (e.g. LOG_SIZE not above CHK_FREQ, empty validator list) (data: `field`, the option
   * refused; `value` for a named choice that does not exist, such as a simulation's fault mix).
   */
  INVALID_OPTIONS: 'CONSENSUS_INVALID_OPTIONS',
  /** The simulator, a stand-in or a simulation world was misused or reached a state it cannot be in (data: `reason`). */
  SIMULATION: 'CONSENSUS_SIMULATION',
} as const;
export type ConsensusErrorCode = (typeof ConsensusErrorCode)[keyof typeof ConsensusErrorCode];

/** The data of each {@link ConsensusErrorCode}, checked wherever a ConsensusError is made. */
export type ConsensusErrorData = {
  CONSENSUS_INVALID_MESSAGE: { op: string | null; field: string };
  /** `faults` is the simulator's option of the fault mix, the one option outside {@link ConsensusOptions}. */
  CONSENSUS_INVALID_OPTIONS: { field: keyof ConsensusOptions | 'faults'; value?: string };
  CONSENSUS_SIMULATION: { reason: string };
};

/** A peer message or options the consensus package refuses, or a misuse of its simulator. */
export class ConsensusError extends CodedError<ConsensusErrorCode, ConsensusErrorData> {}
