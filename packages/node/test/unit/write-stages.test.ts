import { expect } from 'chai';
import { NodeMetrics, observeStages } from '../../src/metrics.js';

// #16: where a write's time goes at a node, by stage (quire_write_stage_seconds)
describe('write-path stage metrics (#16)', () => {
  it('records each stage of an ordered batch, per request for finalise and batch, and skips stages seen out of order', async () => {
    const m = new NodeMetrics({ node: 'Node1' });
    try {
      observeStages(
        m,
        {
          requests: [
            { receivedAt: 100, finalisedAt: 110 },
            { receivedAt: 105, finalisedAt: 125 },
            // finalised here after its PRE-PREPARE was applied (a backup): no batch stage
            { receivedAt: 120, finalisedAt: 140 },
            // never finalised here: neither
            { receivedAt: 121, finalisedAt: 0 },
          ],
          appliedAt: 130,
          preparedAt: 150,
          orderedAt: 170,
        },
        200,
        205,
      );
      const text = await m.registry.metrics();
      const value = (stage: string, what: 'sum' | 'count'): number => {
        const line = text.split('\n').find((l) => l.startsWith(`quire_write_stage_seconds_${what}{`) && l.includes(`stage="${stage}"`));
        expect(line, `${stage} ${what}`).to.not.equal(undefined);
        return Number(line!.split(' ').pop());
      };
      expect(value('finalise', 'count')).to.equal(3);
      expect(value('finalise', 'sum')).to.be.closeTo((10 + 20 + 20) / 1000, 1e-9);
      expect(value('batch', 'count')).to.equal(2);
      expect(value('batch', 'sum')).to.be.closeTo((20 + 5) / 1000, 1e-9);
      expect(value('prepare', 'sum')).to.be.closeTo(0.02, 1e-9);
      expect(value('commit', 'sum')).to.be.closeTo(0.02, 1e-9);
      expect(value('durable', 'sum')).to.be.closeTo(0.03, 1e-9);
      expect(value('reply', 'sum')).to.be.closeTo(0.005, 1e-9);
      expect(text).to.match(/quire_event_loop_delay_seconds\{quantile="0.99",node="Node1"\} /);
    } finally {
      await m.close();
    }
  });
});
