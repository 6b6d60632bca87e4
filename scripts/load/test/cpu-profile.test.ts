// Where the time goes: the area split of V8 CPU profiles (Node.js internals count for their caller).
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageOf, summarizeProfiles } from '../lib/cpu-profile.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; scriptId: string; columnNumber: number };
  children: number[];
}

function node(id: number, functionName: string, url: string, children: number[] = []): Node {
  return { id, callFrame: { functionName, url, lineNumber: 0, scriptId: '0', columnNumber: 0 }, children };
}

describe('cpu profiles', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-prof-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the package of a script, from sources, builds and node_modules', () => {
    expect(packageOf('file:///repo/packages/crypto/src/ed25519.ts')).to.equal('@quire/crypto');
    expect(packageOf('file:///repo/packages/network/dist/framed-stream.js')).to.equal('@quire/network');
    expect(packageOf('file:///repo/node_modules/@chainsafe/libp2p-noise/dist/src/utils.js')).to.equal('@chainsafe/libp2p-noise');
    expect(packageOf('node:internal/streams/readable')).to.equal('node internals');
    expect(packageOf('')).to.equal('(native / V8)');
  });

  it('counts Node.js internals and V8 builtins for the package that called them, GC and start-up apart', () => {
    const nodes = [
      node(1, '(root)', '', [2, 5, 7, 8, 9]),
      node(2, 'verify', 'file:///r/packages/crypto/src/ed25519.ts', [3]),
      node(3, 'verifyOneShot', 'node:internal/crypto/sig', [4]),
      node(4, '', ''), // native under node internals under @quire/crypto
      node(5, 'onData', 'file:///r/node_modules/@chainsafe/libp2p-yamux/dist/src/muxer.js', [6]),
      node(6, 'writeGeneric', 'node:internal/stream_base_commons'),
      node(7, '(garbage collector)', ''),
      node(8, 'compileSourceTextModule', 'node:internal/modules/esm/utils'),
      node(9, '(idle)', ''),
    ];
    // 1 ms per sample: crypto 3 (2, 3, 4), network 2 (5, 6), GC 1, start-up 1, idle 5
    const samples = [2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9];
    writeFileSync(join(dir, 'a.cpuprofile'), JSON.stringify({ nodes, startTime: 0, endTime: 12_000, samples, timeDeltas: samples.map(() => 1000) }));
    const s = summarizeProfiles(dir);
    expect(s.busyMs).to.equal(7);
    expect(s.totalMs).to.equal(12);
    const area = Object.fromEntries(s.byArea.map((a) => [a.name.split(' ')[0], a.ms]));
    expect(area).to.deep.equal({ crypto: 3, network: 2, garbage: 1, module: 1 });
    expect(s.byArea[0]!.share).to.be.closeTo(3 / 7, 1e-9);
  });
});
