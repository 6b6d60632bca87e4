// Free loopback ports for a test pool. The devnet's layout puts node i on base+2(i-1) (nodes) and
// base+2(i-1)+1 (clients), so a pool needs a run of consecutive free ports. The range stays below
// Linux's ephemeral ports (32768+) so that outgoing connections do not take them meanwhile.
import { createServer } from 'node:net';

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => res(true)));
  });
}

const LOW = 12_000;
const HIGH = 32_000;

/** A base port whose `count` consecutive ports are free on 127.0.0.1. */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = LOW + 2 * Math.floor((Math.random() * (HIGH - LOW - count)) / 2);
    let ok = true;
    for (let p = base; p < base + count && ok; p++) ok = await portFree(p);
    if (ok) return base;
  }
  throw new Error(`no run of ${count} free ports found between ${LOW} and ${HIGH}`);
}
