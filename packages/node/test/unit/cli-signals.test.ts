// `quire-node start` and its SIGTERM / SIGINT: one listener per signal from before the start to the exit. A signal
// that arrived while the last step of the start ran was lost when the start's listener was swapped for the running
// node's: removing a signal's last listener closes its watcher, and a signal received but not yet dispatched goes
// with it (the node then ran on, SIGTERM unanswered). The signals here come from an emitter the test holds, so that
// the count of listeners can be followed.
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { freePort, portIsFree, waitFor } from '@quire/testing';
import { main } from '../../src/cli.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { soloNodeConfig } from './helpers.js';

/** An emitter of signals that records the number of SIGTERM listeners after each change. */
class SignalSource extends EventEmitter {
  readonly counts: number[] = [];
  readonly added = Promise.withResolvers<void>();

  override on(event: string | symbol, listener: (...args: unknown[]) => void): this {
    super.on(event, listener);
    this.record(event);
    if (event === 'SIGTERM') this.added.resolve();
    return this;
  }

  override off(event: string | symbol, listener: (...args: unknown[]) => void): this {
    super.off(event, listener);
    this.record(event);
    return this;
  }

  private record(event: string | symbol): void {
    if (event === 'SIGTERM') this.counts.push(this.listenerCount('SIGTERM'));
  }
}

describe('quire-node start: SIGTERM and SIGINT', function () {
  this.timeout(60_000);
  let dir: string;
  let configFile: string;
  let clientPort: number;
  const lines: string[] = [];
  const io = (signals: SignalSource) => ({ out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), signals });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-cli-signals-'));
    clientPort = await freePort();
    const config = { ...(await soloNodeConfig(dir)), nodePort: await freePort(), clientPort, logLevel: 'silent' };
    configFile = join(dir, 'config.json');
    await writeFile(configFile, JSON.stringify(config));
    expect(await main(['init', '--data-dir', dir, '--name', 'Node1', '--seed', nodeSeed('Node1')], io(new SignalSource()))).to.equal(0);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one listener per signal from before the start to the exit, and stops on SIGTERM once started', async () => {
    const signals = new SignalSource();
    const run = main(['start', '--data-dir', dir, '--config', configFile], io(signals));
    await waitFor('the client port to be listened on', async () => ((await portIsFree(clientPort)) ? undefined : true), 30_000, 50);
    signals.emit('SIGTERM', 'SIGTERM');
    expect(await run).to.equal(0);
    // added once before the start, removed once at the exit: never none in between
    expect(signals.counts).to.deep.equal([1, 0]);
    expect(await portIsFree(clientPort)).to.equal(true);
  });

  it('a second signal while the node stops exits 1 at once, without waiting for the shutdown', async () => {
    const signals = new SignalSource();
    const run = main(['start', '--data-dir', dir, '--config', configFile], io(signals));
    await waitFor('the client port to be listened on', async () => ((await portIsFree(clientPort)) ? undefined : true), 30_000, 50);
    signals.emit('SIGTERM', 'SIGTERM');
    signals.emit('SIGINT', 'SIGINT');
    expect(await run).to.equal(1);
    expect(signals.counts).to.deep.equal([1, 0]);
    // the shutdown the second signal did not wait for goes on: the port is free once it is done
    await waitFor('the client port to be free', async () => ((await portIsFree(clientPort)) ? true : undefined), 30_000, 50);
  });

  it('a signal during the start aborts it and exits 0, leaving the data dir free for the next start', async () => {
    const signals = new SignalSource();
    const run = main(['start', '--data-dir', dir, '--config', configFile], io(signals));
    await signals.added.promise;
    signals.emit('SIGINT', 'SIGINT');
    expect(await run).to.equal(0);
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).to.equal(0);
    const again = new SignalSource();
    const second = main(['start', '--data-dir', dir, '--config', configFile], io(again));
    await waitFor('the client port to be listened on', async () => ((await portIsFree(clientPort)) ? undefined : true), 30_000, 50);
    again.emit('SIGTERM', 'SIGTERM');
    expect(await second).to.equal(0);
  });
});
