#!/usr/bin/env node
// read_ledger: print a node's ledger (formats.md 12.2). Runs the built CLI from dist/.
import '@quire/common/polyfill';
import { main } from '../dist/cli/read-ledger.js';

process.exitCode = await main(process.argv.slice(2));
