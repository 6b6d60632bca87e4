// Structured logs: pino, JSON lines on stdout, one child logger per module (`{module: 'client'}`).
// LOG_LEVEL in the environment overrides the configured level; tests pass 'silent' unless it is set.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type NodeLogger = Logger;

export interface LoggerOptions {
  level: LogLevel;
  /** the node's alias, on every line */
  name?: string;
  /** where to write (default stdout) */
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LoggerOptions): NodeLogger {
  const envLevel = process.env.LOG_LEVEL;
  const level = envLevel !== undefined && envLevel !== '' ? envLevel : opts.level;
  const base = opts.name !== undefined ? { node: opts.name } : {};
  const options = { level, base, timestamp: pino.stdTimeFunctions.isoTime };
  return opts.destination !== undefined ? pino(options, opts.destination) : pino(options);
}

/** A logger that writes nothing unless LOG_LEVEL is set (tests). */
export function testLogger(name?: string): NodeLogger {
  return createLogger({ level: 'silent', ...(name !== undefined ? { name } : {}), destination: process.stderr });
}
