/**
 * The installed node version as an upgrade action leaves it. An action that installs software
 * changes the package version itself; one that cannot (the devnet's, which runs from the source
 * tree) records the version it "installed" in `<dataDir>/installed_version`, and the node reports
 * that version from then on.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkUpgradeVersion } from './node-upgrade-request.js';

export const INSTALLED_VERSION_FILE = 'installed_version';

/** The version recorded in the data dir, else `packageVersion`. Throws UpgradeError VERSION_INVALID on a corrupt file. */
export function readInstalledVersion(dataDir: string, packageVersion: string): string {
  const path = join(dataDir, INSTALLED_VERSION_FILE);
  if (!existsSync(path)) return packageVersion;
  const v = readFileSync(path, 'utf8').trim();
  checkUpgradeVersion(v);
  return v;
}

/** Records `version` as installed (atomically: written aside, then renamed). */
export function writeInstalledVersion(dataDir: string, version: string): void {
  checkUpgradeVersion(version);
  const path = join(dataDir, INSTALLED_VERSION_FILE);
  writeFileSync(`${path}.tmp`, `${version}\n`);
  renameSync(`${path}.tmp`, path);
}
