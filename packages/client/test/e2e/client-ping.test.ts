// #16: a client connection whose process stalls for a while (a load generator under overload, GC)
// is alive, and the node must not close it on an unanswered liveness ping: that failed every
// request in flight on it (NODE_UNREACHABLE "the connection muxer is closed"). A dead client is
// still cut off, after `pingTimeoutMs` (30 s by default; libp2p's default was 5 s).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ClientHost, defaultClientHostOptions } from '@quire/network';
import { hostDest, hostSeed } from './hosts.js';
import { SOURCE_RUN_ARGS } from '@quire/testing';

const here = dirname(fileURLToPath(import.meta.url));
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Runs the stalling client against `host`; resolves with what it printed. */
function stallingClient(host: ClientHost, dest: string, stallMs: number): Promise<{ first?: string; second?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...SOURCE_RUN_ARGS, join(here, 'fixtures', 'stalling-client.ts'), '127.0.0.1', String(host.port), dest, String(stallMs)],
      {
        cwd: join(here, '..', '..'),
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let text = '';
    child.stdout.on('data', (b: Buffer) => (text += b.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(text.trim().split('\n').pop() ?? '{}') as { first?: string; second?: string });
      } catch {
        reject(new Error(`the client printed ${JSON.stringify(text)}`));
      }
    });
  });
}

describe('client connections under a stalled client (#16)', function () {
  this.timeout(60_000);
  let dest: string;
  before(async () => {
    dest = hostDest(hostSeed(1));
  });

  async function host(pingTimeoutMs: number): Promise<ClientHost> {
    const h = await ClientHost.create({ seed: hostSeed(1), pingIntervalMs: 200, pingTimeoutMs });
    h.on('request', (_clientId, data, respond) => respond(enc(`echo ${new TextDecoder().decode(data)}`)));
    return h;
  }

  it('keep a client whose process stalls for less than the ping timeout', async () => {
    const h = await host(4_000);
    try {
      const r = await stallingClient(h, dest, 1_500);
      expect(r).to.deep.equal({ first: 'echo one', second: 'echo two' });
    } finally {
      await h.close();
    }
  });

  it('cut off a client that answers no ping for longer than the ping timeout', async () => {
    const h = await host(400);
    try {
      const r = await stallingClient(h, dest, 2_500);
      expect(r.first).to.equal('echo one');
      expect(r.second).to.match(/^failed: /);
    } finally {
      await h.close();
    }
  });

  it("wait 30 s for a ping by default, not libp2p's 5 s", () => {
    expect(defaultClientHostOptions.pingTimeoutMs).to.be.at.least(30_000);
  });
});
