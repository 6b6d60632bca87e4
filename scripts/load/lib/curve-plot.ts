// The load curve of bench:pool as an SVG written by hand (no plotting dependency): left, writes
// acknowledged and refused per second against the rate offered (with the line acknowledged =
// offered); right, the p50 and p99 latency of acknowledged writes on a log scale.

export interface CurvePoint {
  /** the nominal rate offered (the x axis) */
  offered: number;
  /** the rate the load generator actually sent, when known (drawn when it falls short of the nominal rate) */
  sent?: number;
  acked: number;
  refused: number;
  /** timed out or failed, per second */
  failed: number;
  p50: number | undefined;
  p99: number | undefined;
}

const W = 900;
const H = 380;
const PANEL = { w: 360, h: 270, top: 50 };
const LEFT_X = 70;
const RIGHT_X = 520;
const COLORS = { acked: '#1f77b4', refused: '#d62728', failed: '#7f7f7f', p50: '#2ca02c', p99: '#ff7f0e', ideal: '#bbbbbb', sent: '#9467bd' };

/** the generator sent less than this share of the nominal rate: its line is drawn */
const SENT_SHORT = 0.95;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (x: number): string => (Math.abs(x) >= 1000 ? `${Math.round(x / 100) / 10}k` : String(Math.round(x)));

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function polyline(points: [number, number][], color: string, dash = ''): string {
  if (points.length === 0) return '';
  const d = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const marks = points.map(([x, y]) => `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="${color}"/>`).join('');
  return `<polyline fill="none" stroke="${color}" stroke-width="2"${dash !== '' ? ` stroke-dasharray="${dash}"` : ''} points="${d}"/>${marks}`;
}

function legend(x: number, y: number, items: [string, string][]): string {
  return items
    .map(
      ([label, color], i) =>
        `<rect x="${x}" y="${y + i * 16 - 9}" width="12" height="3" fill="${color}"/><text x="${x + 18}" y="${y + i * 16}" font-size="11">${esc(label)}</text>`,
    )
    .join('');
}

/** An SVG document of the curve; `title` goes on top (the command and host, typically). */
export function curveSvg(points: readonly CurvePoint[], title: string): string {
  const xMax = niceMax(Math.max(...points.map((p) => p.offered), 1));
  const yMax = niceMax(Math.max(...points.map((p) => Math.max(p.offered, p.acked, p.refused)), 1));
  const px = (x0: number, v: number): number => x0 + (v / xMax) * PANEL.w;
  const py = (v: number): number => PANEL.top + PANEL.h - (v / yMax) * PANEL.h;
  const lats = points.flatMap((p) => [p.p50, p.p99]).filter((v): v is number => v !== undefined && v > 0);
  const lMin = 10 ** Math.floor(Math.log10(Math.max(1, Math.min(...lats, 10))));
  const lMax = 10 ** Math.ceil(Math.log10(Math.max(...lats, 100)));
  const ly = (v: number): number =>
    PANEL.top + PANEL.h - ((Math.log10(Math.max(v, lMin)) - Math.log10(lMin)) / (Math.log10(lMax) - Math.log10(lMin))) * PANEL.h;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="20" font-size="13" text-anchor="middle">${esc(title)}</text>`);
  for (const x0 of [LEFT_X, RIGHT_X]) {
    out.push(`<rect x="${x0}" y="${PANEL.top}" width="${PANEL.w}" height="${PANEL.h}" fill="none" stroke="#333"/>`);
    for (let i = 0; i <= 5; i++) {
      const v = (xMax * i) / 5;
      out.push(
        `<line x1="${px(x0, v)}" y1="${PANEL.top + PANEL.h}" x2="${px(x0, v)}" y2="${PANEL.top + PANEL.h + 4}" stroke="#333"/><text x="${px(x0, v)}" y="${PANEL.top + PANEL.h + 16}" font-size="10" text-anchor="middle">${num(v)}</text>`,
      );
    }
    out.push(`<text x="${x0 + PANEL.w / 2}" y="${PANEL.top + PANEL.h + 34}" font-size="11" text-anchor="middle">NYM writes offered per second</text>`);
  }
  // left: throughput
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5;
    out.push(
      `<line x1="${LEFT_X}" y1="${py(v)}" x2="${LEFT_X + PANEL.w}" y2="${py(v)}" stroke="#eee"/><text x="${LEFT_X - 6}" y="${py(v) + 3}" font-size="10" text-anchor="end">${num(v)}</text>`,
    );
  }
  out.push(
    `<text x="${LEFT_X - 45}" y="${PANEL.top + PANEL.h / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 ${LEFT_X - 45} ${PANEL.top + PANEL.h / 2})">writes per second</text>`,
  );
  out.push(
    polyline(
      [
        [px(LEFT_X, 0), py(0)],
        [px(LEFT_X, Math.min(xMax, yMax)), py(Math.min(xMax, yMax))],
      ],
      COLORS.ideal,
      '4 4',
    ).replace(/<circle[^>]*>/g, ''),
  );
  out.push(
    polyline(
      points.map((p) => [px(LEFT_X, p.offered), py(p.acked)]),
      COLORS.acked,
    ),
  );
  out.push(
    polyline(
      points.map((p) => [px(LEFT_X, p.offered), py(p.refused)]),
      COLORS.refused,
    ),
  );
  const short = points.some((p) => p.sent !== undefined && p.sent < SENT_SHORT * p.offered);
  if (short)
    out.push(
      polyline(
        points.map((p) => [px(LEFT_X, p.offered), py(p.sent ?? p.offered)]),
        COLORS.sent,
        '2 3',
      ),
    );
  if (points.some((p) => p.failed > 0))
    out.push(
      polyline(
        points.map((p) => [px(LEFT_X, p.offered), py(p.failed)]),
        COLORS.failed,
      ),
    );
  out.push(
    legend(LEFT_X + 10, PANEL.top + 16, [
      ['acknowledged', COLORS.acked],
      ['refused (pool overloaded)', COLORS.refused],
      ...(points.some((p) => p.failed > 0) ? ([['timed out / failed', COLORS.failed]] as [string, string][]) : []),
      ['acknowledged = offered', COLORS.ideal],
      ...(short ? ([['sent by the generator (short of the nominal rate)', COLORS.sent]] as [string, string][]) : []),
    ]),
  );
  // right: latency, log scale
  for (let v = lMin; v <= lMax; v *= 10) {
    out.push(
      `<line x1="${RIGHT_X}" y1="${ly(v)}" x2="${RIGHT_X + PANEL.w}" y2="${ly(v)}" stroke="#eee"/><text x="${RIGHT_X - 6}" y="${ly(v) + 3}" font-size="10" text-anchor="end">${num(v)}</text>`,
    );
  }
  out.push(
    `<text x="${RIGHT_X - 45}" y="${PANEL.top + PANEL.h / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 ${RIGHT_X - 45} ${PANEL.top + PANEL.h / 2})">latency of acknowledged writes, ms</text>`,
  );
  out.push(
    polyline(
      points.filter((p) => p.p50 !== undefined).map((p) => [px(RIGHT_X, p.offered), ly(p.p50!)]),
      COLORS.p50,
    ),
  );
  out.push(
    polyline(
      points.filter((p) => p.p99 !== undefined).map((p) => [px(RIGHT_X, p.offered), ly(p.p99!)]),
      COLORS.p99,
    ),
  );
  out.push(
    legend(RIGHT_X + 10, PANEL.top + 16, [
      ['p50', COLORS.p50],
      ['p99', COLORS.p99],
    ]),
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}
