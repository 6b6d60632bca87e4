// The version of the node software: the `version` of this package's package.json (one level above
// both src/ and dist/).
import { readFileSync } from 'node:fs';
import { NodeError, NodeErrorCode } from './errors.js';

let cached: string | undefined;

/** The package version of @quire/node, e.g. `0.1.0`. */
export function nodePackageVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    if (typeof pkg.version !== 'string') throw new NodeError(NodeErrorCode.VERSION_UNKNOWN, { reason: 'package.json has no version' });
    cached = pkg.version;
  }
  return cached;
}
