// The chaos harness's own parts: the seeded schedule replays, and the namespace network really
// partitions, heals and is torn down (skipped with the reason where namespaces cannot be made).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { compareNodeVersions } from '@quire/requests';
import { nextPatch, runningVersion } from '../../scripts/chaos/perturb.js';
import type { ChaosNode } from '../../scripts/chaos/pool.js';
import { ALL_KINDS, PROCESS_KINDS, Rng, planSchedule } from '../../scripts/chaos/schedule.js';
import { ChaosNetwork, netnsUnavailableReason, ownNamespacesGone } from '../../scripts/chaos/netns.js';

describe('chaos harness', () => {
  describe('schedule', () => {
    it('the same seed gives the same schedule; another seed another one', () => {
      const plan = (seed: number): string => JSON.stringify(planSchedule(seed, ALL_KINDS, 20 * 60_000).map((p) => [p.kind, p.holdMs, p.gapMs, p.rng.next()]));
      expect(plan(42)).to.equal(plan(42));
      expect(plan(42)).to.not.equal(plan(43));
    });

    it('walks every kind once before drawing at random, and fills the planned time', () => {
      const s = planSchedule(7, PROCESS_KINDS, 30 * 60_000);
      expect(new Set(s.slice(0, PROCESS_KINDS.length).map((p) => p.kind)).size).to.equal(PROCESS_KINDS.length);
      expect(s.reduce((t, p) => t + p.holdMs + p.gapMs + 5_000, 0)).to.be.at.least(30 * 60_000);
    });

    it('the first pass of a full schedule walks every kind, the pool-reshaping ones included', () => {
      const s = planSchedule(11, ALL_KINDS, 30 * 60_000);
      expect(new Set(s.slice(0, ALL_KINDS.length).map((p) => p.kind))).to.deep.equal(new Set(ALL_KINDS));
      expect(ALL_KINDS).to.include.members(['pool-upgrade', 'node-add-demote', 'pool-restart']);
    });

    it('Rng.sample draws distinct elements', () => {
      const r = new Rng(1);
      for (let i = 0; i < 50; i++) {
        const s = r.sample([1, 2, 3, 4, 5], 3);
        expect(new Set(s).size).to.equal(3);
      }
    });
  });

  describe('pool-upgrade versions', () => {
    it('a forced upgrade goes to the next patch release, compared part by part', () => {
      expect(nextPatch('0.1.0')).to.equal('0.1.1');
      expect(nextPatch('0.1.9')).to.equal('0.1.10');
      expect(nextPatch('2.0')).to.equal('2.0.1');
      expect(Math.sign(compareNodeVersions('0.1.10', '0.1.9'))).to.equal(1);
      expect(compareNodeVersions('0.1.1', '0.1.1')).to.equal(0);
      expect(Math.sign(compareNodeVersions('0.1', '0.1.1'))).to.equal(-1);
    });

    it("a node's running version is its installed_version, else @quire/node's package version", () => {
      const dir = mkdtempSync(join(tmpdir(), 'quire-chaos-version-'));
      try {
        const n = { layout: { dataDir: dir } } as unknown as ChaosNode;
        expect(runningVersion(n)).to.match(/^\d+\.\d+\.\d+$/);
        writeFileSync(join(dir, 'installed_version'), '0.1.7\n');
        expect(runningVersion(n)).to.equal('0.1.7');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('network namespaces', function () {
    this.timeout(60_000);
    const why = netnsUnavailableReason();
    let net: ChaosNetwork | undefined;

    before(function () {
      if (why !== undefined) {
        console.log(`    (skipped: ${why})`);
        this.skip();
      }
    });

    afterEach(() => net?.close());

    const servers: ReturnType<typeof spawn>[] = [];
    afterEach(() => {
      for (const s of servers.splice(0)) s.kill('SIGKILL');
    });

    /** A TCP server on port 7777 of host `b` (until the test ends). */
    async function serve(n: ChaosNetwork, b: string): Promise<void> {
      const code = `require('net').createServer((s)=>s.end('ok')).listen(7777,'${n.host(b).ip}',()=>console.log('up'))`;
      const srv = spawn('ip', [...n.execPrefix(b).slice(1), process.execPath, '-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
      servers.push(srv);
      await new Promise<void>((res) => srv.stdout!.once('data', () => res()));
    }

    /**
     * Whether host `a` connects to the server of host `b`: the client tries for 3 s from its own
     * start (a partition shows as no connection in that time; a reachable host answers at once).
     */
    async function reaches(n: ChaosNetwork, a: string, b: string): Promise<boolean> {
      const code = `const t=Date.now();(function go(){const s=require('net').connect(7777,'${n.host(b).ip}');s.setTimeout(1000,()=>s.destroy(new Error('t')));s.on('data',()=>process.exit(0));s.on('error',()=>Date.now()-t<3000?setTimeout(go,100):process.exit(1))})()`;
      const cli = spawn('ip', [...n.execPrefix(a).slice(1), process.execPath, '-e', code], { stdio: 'ignore' });
      return (await new Promise<number | null>((res) => cli.once('exit', res))) === 0;
    }

    it('hosts reach each other on their own addresses; a partition cuts them, a bridge host sees both sides, heal restores', async () => {
      net = ChaosNetwork.create(['A', 'B', 'C']);
      expect(net.host('A').ip).to.not.equal(net.host('B').ip);
      await serve(net, 'B');
      await serve(net, 'C');
      expect(await reaches(net, 'A', 'B')).to.equal(true);
      net.partition(['A'], ['B']);
      expect(await reaches(net, 'A', 'B')).to.equal(false);
      expect(await reaches(net, 'C', 'B')).to.equal(true);
      expect(await reaches(net, 'A', 'C')).to.equal(true);
      net.heal();
      expect(await reaches(net, 'A', 'B')).to.equal(true);
      net.setLink('B', false);
      expect(await reaches(net, 'A', 'B')).to.equal(false);
      net.heal();
      expect(await reaches(net, 'A', 'B')).to.equal(true);
      net.close();
      expect(ownNamespacesGone()).to.equal(true);
    });

    it('loss, duplication and a bandwidth cap can be set and healed', () => {
      net = ChaosNetwork.create(['A']);
      net.setLoss('A', 10);
      net.setDup('A', 10);
      net.setRate('A', 256);
      net.heal();
      net.close();
      expect(ownNamespacesGone()).to.equal(true);
    });
  });
});
