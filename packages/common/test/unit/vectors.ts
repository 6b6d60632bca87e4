// Loads the shared test vectors (formats.md), parsed losslessly.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
export const VECTORS_DIR = process.env.QUIRE_VECTORS ?? join(here, '../../../../test/vectors');

export function loadVectors<T>(file: string): T {
  return JSON.parse(readFileSync(join(VECTORS_DIR, file), 'utf8')) as T;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
