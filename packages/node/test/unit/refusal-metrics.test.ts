// Where a node refused writes as overloaded: as the client host read the frame, or after the frame waited in its inbox.
import { expect } from 'chai';
import { NodeMetrics } from '../../src/metrics.js';

async function refusals(m: NodeMetrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await m.refusals.get()).values) out[String(v.labels.where)] = v.value;
  return out;
}

describe('quire_client_refusals_total', () => {
  it('splits the refusals into those answered as the frame was read and those that waited in the inbox', async () => {
    const m = new NodeMetrics({ node: 'N' });
    try {
      expect(await refusals(m)).to.deep.equal({});
      let atFrame = 7;
      let total = 10;
      m.setRefusalSource(() => ({ atFrame, total }));
      expect(await refusals(m)).to.deep.equal({ frame: 7, queued: 3 });
      atFrame = 9;
      total = 15;
      expect(await refusals(m)).to.deep.equal({ frame: 9, queued: 6 });
      const text = await m.registry.metrics();
      expect(text).to.include('# TYPE quire_client_refusals_total counter');
      expect(text).to.include('quire_client_refusals_total{where="queued",node="N"} 6');
      // a scrape with nothing new keeps the counts
      expect(await refusals(m)).to.deep.equal({ frame: 9, queued: 6 });
    } finally {
      await m.close();
    }
  });
});
