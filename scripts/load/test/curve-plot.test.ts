import { expect } from 'chai';
import fc from 'fast-check';
import { curveSvg, type CurvePoint } from '../lib/curve-plot.js';

const polylines = (svg: string): string[][] => [...svg.matchAll(/<polyline[^>]*points="([^"]*)"/g)].map((m) => m[1]!.split(' '));

describe('curveSvg', () => {
  const points: CurvePoint[] = [
    { offered: 100, acked: 100, refused: 0, failed: 0, p50: 40, p99: 90 },
    { offered: 1000, acked: 980, refused: 0, failed: 0, p50: 120, p99: 700 },
    { offered: 2500, acked: 950, refused: 1540, failed: 0, p50: 2900, p99: 4100 },
  ];

  it('draws the ideal line, acknowledged, refused, p50 and p99, one mark per point, with the title escaped', () => {
    const svg = curveSvg(points, 'run <1> & co');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).to.equal(true);
    expect(svg.trimEnd().endsWith('</svg>')).to.equal(true);
    expect(svg).to.include('run &lt;1&gt; &amp; co');
    const lines = polylines(svg);
    expect(lines.map((l) => l.length)).to.deep.equal([2, 3, 3, 3, 3]);
    // no failed line when nothing failed; one when something did
    expect(polylines(curveSvg([...points, { offered: 3000, acked: 900, refused: 2000, failed: 5, p50: 3000, p99: 5000 }], 't'))).to.have.length(6);
  });

  it('draws the rate the generator sent when it fell short of the nominal rate, and names it in the legend', () => {
    expect(
      curveSvg(
        points.map((p) => ({ ...p, sent: p.offered * 0.99 })),
        't',
      ),
    ).to.not.include('sent by the generator');
    const svg = curveSvg(
      points.map((p) => ({ ...p, sent: p.offered === 2500 ? 1400 : p.offered })),
      't',
    );
    expect(svg).to.include('sent by the generator (short of the nominal rate)');
    const lines = polylines(svg);
    expect(lines).to.have.length(6);
    // the sent line's last point is at 1,400 on the y axis: below the offered 2,500, above the acknowledged 950
    const [, acked, , sent] = lines;
    const y = (l: string[] | undefined, i: number): number => Number(l![i]!.split(',')[1]);
    expect(y(sent, 2)).to.be.lessThan(y(acked, 2));
    expect(y(sent, 0)).to.be.lessThan(y(acked, 0) + 1e-9);
  });

  it('higher acknowledged rates are drawn higher (smaller y)', () => {
    const [, acked] = polylines(curveSvg(points, 't'));
    const ys = acked!.map((p) => Number(p.split(',')[1]));
    expect(ys[0]).to.be.greaterThan(ys[1]!);
  });

  it('never writes NaN or Infinity, whatever the figures', () => {
    const pt = fc.record({
      offered: fc.double({ min: 0, max: 1e5, noNaN: true }),
      acked: fc.double({ min: 0, max: 1e5, noNaN: true }),
      refused: fc.double({ min: 0, max: 1e5, noNaN: true }),
      failed: fc.double({ min: 0, max: 1e5, noNaN: true }),
      p50: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: undefined }),
      p99: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(pt, { minLength: 1, maxLength: 8 }), (ps) => {
        const svg = curveSvg(ps, 't');
        expect(svg).to.not.match(/NaN|Infinity/);
      }),
    );
  });
});
