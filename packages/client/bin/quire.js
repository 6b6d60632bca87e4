#!/usr/bin/env node
// quire: the Quire ledger client (keys, requests, verified reads). Runs the built CLI from dist/.
import '@quire/common/polyfill';
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
