// Runs `read_ledger` of @quire/storage from its TypeScript sources (the package's bin runs dist/).
import { main } from '../../../packages/storage/src/cli/read-ledger.js';

process.exitCode = await main(process.argv.slice(2));
