// Short variants of the protocol fuzzers (scripts/chaos/fuzz-*.ts) against real node processes on
// loopback, and properties of the mutators. The full runs (100,000 messages each) are
// `npm run fuzz:client` and `npm run fuzz:peer`. QUIRE_FUZZ_SEED replays a seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeMsgpack } from '@quire/common';
import { freePortRun } from '../support/ports.js';
import { fuzzClients, mutate, poolOrders, seedMessages } from '../../scripts/chaos/fuzz-client.js';
import { handMade, mutatePeer, runPeerFuzz } from '../../scripts/chaos/fuzz-peer.js';
import { ChaosPool } from '../../scripts/chaos/pool.js';
import { Rng } from '../../scripts/chaos/schedule.js';

const seed = process.env.QUIRE_FUZZ_SEED !== undefined ? Number(process.env.QUIRE_FUZZ_SEED) : Math.floor(Math.random() * 1e6);

describe('fuzzers', () => {
  describe('mutators', () => {
    it('every client mutation is bytes, and the same seed gives the same bytes', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 8 }), (s, which) => {
          const base = seedMessages(1000)[which]!;
          const a = mutate(base, new Rng(s), s);
          const b = mutate(base, new Rng(s), s);
          expect(a.bytes).to.be.instanceOf(Uint8Array);
          expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes))).to.equal(true);
          expect(a.kind).to.equal(b.kind);
        }),
        { numRuns: 200 },
      );
    });

    it('peer mutations are bytes; replays decode to the message they replay', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1e6 }), (s) => {
          const rng = new Rng(s);
          const base = rng.pick(handMade(0, 5));
          const m = mutatePeer(base, rng, s);
          expect(m.bytes).to.be.instanceOf(Uint8Array);
          if (m.kind === 'replay' || m.kind === 'flood') expect(decodeMsgpack(m.bytes)).to.deep.equal(base);
        }),
        { numRuns: 200 },
      );
    });
  });

  it('a peer message msgpack cannot encode, whose toString is no function, still gives bytes', () => {
    // seen in a 100,000-message run: the fallback printed the message with String(), which threw
    const base = { op: 'PREPARE', toString: 2, valueOf: 1, big: -(2n ** 70n) } as unknown as Parameters<typeof mutatePeer>[0];
    for (let s = 0; s < 40; s++) expect(mutatePeer(base, new Rng(s), s).bytes).to.be.instanceOf(Uint8Array);
  });

  describe('against real nodes', function () {
    this.timeout(20 * 60_000);
    // Opt-in (QUIRE_FUZZ=1, npm run test:fuzz) until a run on an idle machine has shown it passing.
    before(function () {
      if (process.env.QUIRE_FUZZ !== '1') {
        console.log('    (skipped: the real-node fuzz runs are opt-in until they have passed on an idle machine: npm run test:fuzz)');
        this.skip();
      }
    });

    it(`client protocol: 1,000 mutated messages, each answered by a REPLY, a REQACK or a coded refusal; no node exits; the pool orders after (seed ${seed})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quire-fuzz-test-'));
      const exits: string[] = [];
      const pool = await ChaosPool.create({
        dir,
        nodes: 4,
        net: undefined,
        basePort: await freePortRun(8),
        configOverride: { limits: { clientRate: 100_000, clientBurst: 100_000, clientMaxPending: 4096 } },
        onUnexpectedExit: (n, e) => exits.push(`${n.name} ${e.code} ${e.signal}`),
      });
      try {
        pool.startAll();
        expect(await poolOrders(pool.genesisFile, 600_000), 'the pool orders before fuzzing').to.equal(true);
        const targets = pool.nodes.slice(0, 2).map((n) => ({ name: n.name, host: '127.0.0.1', port: n.layout.clientPort, dest: n.dest }));
        const stats = await fuzzClients(targets, 1_000, seed, { inFlight: 8 });
        expect(stats.messages).to.equal(1_000);
        expect(stats.examples, JSON.stringify(stats.byOutcome)).to.deep.equal([]);
        expect(await poolOrders(pool.genesisFile, 120_000), 'the pool orders after fuzzing').to.equal(true);
        expect(exits).to.deep.equal([]);
      } finally {
        await pool.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it(`peer protocol: 2,000 mutated messages from a validator key; the honest n-f keep ordering, none exits (seed ${seed})`, async () => {
      const r = await runPeerFuzz(2_000, seed);
      expect(r.exits).to.deep.equal([]);
      expect(r.poolOrdersAfter).to.equal(true);
      expect(r.writesDuring.ok).to.be.greaterThan(0);
      expect(r.ok).to.equal(true);
    });
  });
});
