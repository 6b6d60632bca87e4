// Runs the `quire` CLI of @quire/client from its TypeScript sources (the package's bin runs dist/).
// Started with: node --conditions=quire-source --import tsx --import @quire/common/polyfill test/support/bin/quire.ts ...
import { main } from '../../../packages/client/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
