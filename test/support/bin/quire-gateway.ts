// Runs the `quire-gateway` CLI of @quire/gateway from its TypeScript sources (the package's bin runs dist/).
// Started with: node --conditions=quire-source --import tsx --import @quire/common/polyfill test/support/bin/quire-gateway.ts ...
import { main } from '../../../packages/gateway/src/cli.js';

process.exitCode = await main(process.argv.slice(2));
