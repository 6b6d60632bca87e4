import { CodedError } from '@quire/common';

/** Codes of {@link UpgradeError}. */
export const UpgradeErrorCode = {
  /** NODE_UPGRADE `action` is not in_progress / complete / fail (data: `action`). */
  NODE_UPGRADE_ACTION_INVALID: 'NODE_UPGRADE_ACTION_INVALID',
  /** A version that is not 1..128 characters of `[0-9a-zA-Z.-+!]` (data: `version`). */
  VERSION_INVALID: 'VERSION_INVALID',
  /** A POOL_UPGRADE txn lacks a field the scheduler needs or holds one of the wrong type (data: `field`, `seqNo`). */
  POOL_UPGRADE_TXN_INVALID: 'POOL_UPGRADE_TXN_INVALID',
  /** A schedule or restart date-time that does not parse as ISO-8601 with an offset (data: `value`). */
  DATETIME_INVALID: 'DATETIME_INVALID',
  /** No upgrade action command is configured on this node. */
  ACTION_NOT_CONFIGURED: 'ACTION_NOT_CONFIGURED',
  /** The upgrade action command could not be started (data: `command`, `reason`). */
  ACTION_SPAWN_FAILED: 'ACTION_SPAWN_FAILED',
  /** The upgrade action command exited unsuccessfully (data: `exitCode`, `signal`, `output`). */
  ACTION_FAILED: 'ACTION_FAILED',
  /** The upgrade action command outlived its timeout and was killed (data: `timeoutMs`, `output`). */
  ACTION_TIMEOUT: 'ACTION_TIMEOUT',
  /** An action log cannot be read or appended (data: `path`, `reason`). */
  LOG_IO: 'LOG_IO',
} as const;
export type UpgradeErrorCode = (typeof UpgradeErrorCode)[keyof typeof UpgradeErrorCode];

/** The data each code carries (a `new UpgradeError` is checked against it). */
export type UpgradeErrorData = {
  NODE_UPGRADE_ACTION_INVALID: { action: unknown };
  VERSION_INVALID: { version: unknown };
  POOL_UPGRADE_TXN_INVALID: { field: string; seqNo: number | undefined };
  DATETIME_INVALID: { value: unknown };
  ACTION_NOT_CONFIGURED: Record<string, never>;
  ACTION_SPAWN_FAILED: { command: string; reason: string };
  ACTION_FAILED: { exitCode: number | null; signal: NodeJS.Signals | null; output: string };
  ACTION_TIMEOUT: { timeoutMs: number; output: string };
  LOG_IO: { path: string; reason: string };
};

/** Errors of the upgrade and restart schedulers, with a stable code. */
export class UpgradeError extends CodedError<UpgradeErrorCode, UpgradeErrorData> {}
