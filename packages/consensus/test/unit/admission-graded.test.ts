// Graded admission (intake.ts `limitFor`): under overload the nodes read a client's copies at different times, and a
// node with one limit for every request filled its free places with whatever it read first. The nodes then held
// different requests, many taken in by fewer than the n-f that finalise one: they held the places until dropped,
// while the requests the others took in were refused, and the pool ordered a fraction of what it could. With the
// limit graded by a place that every node computes alike from the request, the nodes take in about the same ones.
import { expect } from 'chai';
import { GRADED_ADMISSION_SHARE, admissionPlace } from '../../src/intake.js';
import { Pool, VALIDATORS } from './scripted-pool.js';

describe('graded admission (intake.ts limitFor)', function () {
  // about 3,000 signed requests: seconds of CPU on a loaded machine
  this.timeout(120_000);

  it('places are spread over [0, 1) and the same for the same identity', () => {
    const places = Array.from({ length: 4000 }, (_, i) => admissionPlace(`V4SGRU86Z58d6TV7PBUe6f|${1_700_000_000_000 + i}|s:5ibEj${i}`));
    expect(places.every((p) => p >= 0 && p < 1)).to.equal(true);
    const deciles = new Array<number>(10).fill(0);
    for (const p of places) deciles[Math.floor(p * 10)]!++;
    for (const d of deciles) expect(d, String(deciles)).to.be.within(300, 500);
    expect(admissionPlace('a|1|s:x')).to.equal(admissionPlace('a|1|s:x'));
    expect(GRADED_ADMISSION_SHARE).to.be.within(0.1, 0.9);
  });

  it('offered 5x what the pool orders, with the nodes reading the client copies up to 450 ms apart, most requests taken in are finalised and ordered', () => {
    // the pool orders slowly (100 ms links, batches of 20, one in flight: about 60 requests/s); a node's PROPAGATE
    // reaches the others 600 ms after it took the request in (its signature checks wait their turn under overload),
    // after each node's own door decided on the client's copy
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, maxRequestQueueSize: 100, max3pcBatchSize: 20, max3pcBatchesInFlight: 1 });
    pool.delay = (_from, _to, msg) => (msg.op === 'PROPAGATE' ? 600 : 100);
    pool.start();
    pool.runUntil(10_000);
    const t = 10_000;
    const lag = new Map(VALIDATORS.map((n, i) => [n, i * 150]));
    // 300 writes/s for 10 s, 3 every 10 ms; node i reads each copy lag(i) ms after it was sent
    const sent: string[] = [];
    for (let ms = 0; ms < 10_000; ms += 10) {
      const reqs = Array.from({ length: 3 }, (_, i) => pool.client.request(`grade${ms}x${i}xxxxxxxxxxxxxxxxxxx`));
      for (const r of reqs) {
        sent.push(String(r.reqId));
        for (const n of VALIDATORS) pool.sendAt(t + ms + (lag.get(n) ?? 0), r, [n]);
      }
    }
    pool.runUntil(t + 12_000);
    // requests each node took in (acknowledged) and requests the pool ordered (replied by a node that took them in)
    const ackedBy = (id: string): number => VALIDATORS.filter((n) => pool.answers.get(`${n}:${id}`) === 'ack').length;
    const takenIn = sent.filter((id) => ackedBy(id) > 0);
    const ordered = new Set<number>();
    for (const n of VALIDATORS) for (const id of pool.orderedBy.get(n) ?? []) ordered.add(id);
    const orderedShare = takenIn.filter((id) => ordered.has(Number(id))).length / takenIn.length;
    // with one limit for every request: 262 ordered, 29 % of the 913 requests some node took in (434 and 49 % graded)
    expect(ordered.size, 'ordered').to.be.greaterThan(380);
    expect(orderedShare, `${ordered.size} ordered of ${takenIn.length} taken in by some node`).to.be.greaterThan(0.4);
    expect(pool.cores.get('Node2')!.status().viewNo).to.equal(0);
  });
});
