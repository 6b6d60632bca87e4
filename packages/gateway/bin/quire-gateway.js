#!/usr/bin/env node
// quire-gateway: the HTTP gateway of a Quire pool. Runs the built CLI from dist/.
import '@quire/common/polyfill';
import { main } from '../dist/cli.js';

process.exitCode = await main(process.argv.slice(2));
