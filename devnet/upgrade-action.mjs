#!/usr/bin/env node
// The devnet's upgrade action (the node config's `upgrade.actionCommand`). A devnet node runs from
// the source tree, so there is no package to install: the action records the target version in the
// node's data directory (`installed_version`, which the node reports as its version from then on)
// and exits 0, after which the node exits with the restart code and the devnet supervisor starts it
// again. Usage: upgrade-action.mjs <version>   (QUIRE_DATA_DIR names the node's data directory)
import { renameSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';

const version = process.argv[2];
const dataDir = process.env.QUIRE_DATA_DIR;
if (version === undefined || !/^[0-9a-zA-Z.\-+!]{1,128}$/.test(version)) {
  console.error(`upgrade-action: invalid version ${JSON.stringify(version)}`);
  process.exit(2);
}
if (!dataDir) {
  console.error('upgrade-action: QUIRE_DATA_DIR is not set');
  process.exit(2);
}
const file = join(dataDir, 'installed_version');
writeFileSync(`${file}.tmp`, `${version}\n`);
renameSync(`${file}.tmp`, file);
appendFileSync(join(dataDir, 'upgrade-action.log'), `${new Date().toISOString()} installed ${version} (package ${process.env.QUIRE_UPGRADE_PACKAGE ?? '?'})\n`);
console.log(`upgrade-action: ${process.env.QUIRE_NODE_NAME ?? 'node'} now at version ${version}`);
