// Where a node keeps its database, shared by the node and the tools that read its data directory.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Environment variable naming the node data directory. */
export const DATA_DIR_ENV = 'QUIRE_DATA_DIR';
/** Name of the LevelDB directory inside a node data directory. */
export const NODE_DATABASE_DIRNAME = 'db';

/** The default node data directory: $QUIRE_DATA_DIR, else ~/.quire. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[DATA_DIR_ENV];
  return fromEnv !== undefined && fromEnv.length > 0 ? fromEnv : join(homedir(), '.quire');
}

/** The database directory of a node data directory: `<dataDir>/db`. */
export function nodeDatabasePath(dataDir: string): string {
  return join(dataDir, NODE_DATABASE_DIRNAME);
}

/**
 * The LevelDB directory to read for `dir`: `<dir>/db` when it holds a database, else `dir` itself
 * when it is one; undefined when neither is.
 */
export function findDatabase(dir: string): string | undefined {
  const nested = nodeDatabasePath(dir);
  if (existsSync(join(nested, 'CURRENT'))) return nested;
  if (existsSync(join(dir, 'CURRENT'))) return dir;
  return undefined;
}
