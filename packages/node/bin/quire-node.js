#!/usr/bin/env node
// quire-node: the Quire validator (init, start). Runs the built CLI from dist/.
import '@quire/common/polyfill';
import { main } from '../dist/cli.js';

process.exit(await main(process.argv.slice(2)));
