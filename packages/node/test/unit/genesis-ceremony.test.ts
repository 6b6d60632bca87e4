// quire-node genesis: the ceremony of a pool on real hosts, from each node's `init --json` output and the
// trustees' and stewards' DIDs, through the CLI as an operator runs it; every check refuses with one line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { readGenesisFile } from '@quire/storage';
import { main } from '../../src/cli.js';

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function run(argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const trustee = Ed25519Signer.fromSeed('000000000000000000000000Trustee9');
const stewards = [1, 2, 3, 4].map((i) => Ed25519Signer.fromSeed(`Steward${i}x`.padStart(32, '0')));
const id = (s: Ed25519Signer): string => `${s.did}:${s.verkey}`;

describe('quire-node genesis (the genesis ceremony)', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'quire-ceremony-'));
  const initFiles: string[] = [];
  after(() => rmSync(dir, { recursive: true, force: true }));

  before(async () => {
    // four hosts: each operator runs init with the host's addresses and hands over the JSON
    for (let i = 1; i <= 4; i++) {
      const r = await run([
        'init',
        '--data-dir',
        join(dir, `host${i}`),
        '--name',
        `Node${i}`,
        '--node-ip',
        `10.0.0.${i}`,
        '--node-port',
        '9701',
        '--client-ip',
        `10.0.0.${i}`,
        '--client-port',
        '9702',
        '--json',
      ]);
      expect(r.code, r.err.join('\n')).to.equal(0);
      const o = JSON.parse(r.out[0]!) as Record<string, unknown>;
      expect(o).to.include({ name: `Node${i}`, node_ip: `10.0.0.${i}`, node_port: 9701, client_ip: `10.0.0.${i}`, client_port: 9702 });
      expect(o).to.not.have.any.keys('seed', 'secret', 'blsSecret');
      const file = join(dir, `node${i}.json`);
      writeFileSync(file, r.out[0]!);
      initFiles.push(file);
    }
  });

  const args = (over: { nodes?: string[]; stewards?: string[]; out?: string } = {}): string[] => [
    'genesis',
    ...(over.nodes ?? initFiles).flatMap((f) => ['--node', f]),
    '--trustee',
    id(trustee),
    ...(over.stewards ?? stewards.map(id)).flatMap((s) => ['--steward', s]),
    '--out',
    over.out ?? join(dir, 'out'),
  ];

  it('builds both genesis files, says where each goes, and they load as genesis', async () => {
    const r = await run(args());
    expect(r.code, r.err.join('\n')).to.equal(0);
    expect(r.out[0]).to.equal(
      `wrote ${join(dir, 'out', 'pool_transactions_genesis')} (4 validators) and ${join(dir, 'out', 'domain_transactions_genesis')} (1 trustees, 4 stewards)`,
    );
    expect(r.out.join('\n')).to.contain('Node1 on 10.0.0.1');
    const pool = readFileSync(join(dir, 'out', 'pool_transactions_genesis'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => parseJson(l) as { txn: { data: { dest: string; data: Record<string, unknown> }; metadata: { from: string }; type: string } });
    expect(pool.map((t) => t.txn.data.data.alias)).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
    expect(pool.map((t) => t.txn.metadata.from)).to.deep.equal(stewards.map((s) => s.did));
    expect(pool[2]!.txn.data.data).to.include({ node_ip: '10.0.0.3', node_port: 9701, client_ip: '10.0.0.3', client_port: 9702 });
    expect(pool[0]!.txn.data.dest).to.equal((JSON.parse(readFileSync(initFiles[0]!, 'utf8')) as { dest: string }).dest);
    const domain = readFileSync(join(dir, 'out', 'domain_transactions_genesis'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => parseJson(l) as { txn: { data: Record<string, unknown>; metadata: Record<string, unknown> } });
    expect(domain[0]!.txn.data).to.deep.equal({ dest: trustee.did, role: '0', verkey: trustee.verkey });
    expect(domain[0]!.txn.metadata).to.deep.equal({});
    expect(domain.slice(1).map((t) => [t.txn.data.dest, t.txn.data.role, t.txn.metadata.from])).to.deep.equal(stewards.map((s) => [s.did, '2', trustee.did]));
    expect(await readGenesisFile(join(dir, 'out', 'pool_transactions_genesis'), { ledgerId: 0 })).to.have.length(4);
    expect(await readGenesisFile(join(dir, 'out', 'domain_transactions_genesis'), { ledgerId: 1 })).to.have.length(5);
  });

  it('refuses, with one line naming the problem, what would break the pool', async () => {
    const edit = (i: number, change: (o: Record<string, unknown>) => void): string => {
      const o = JSON.parse(readFileSync(initFiles[i]!, 'utf8')) as Record<string, unknown>;
      change(o);
      const file = join(dir, `edited-${i}-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify(o));
      return file;
    };
    const other = JSON.parse(readFileSync(initFiles[1]!, 'utf8')) as Record<string, unknown>;
    const cases: [string[], RegExp][] = [
      // a proof of possession of another key
      [
        args({ nodes: [edit(0, (o) => (o.blskey_pop = other.blskey_pop)), ...initFiles.slice(1)] }),
        /node1-?.*blskey_pop: the proof of possession does not verify against the BLS key of Node1$|blskey_pop: the proof of possession does not verify against the BLS key of Node1$/,
      ],
      // two nodes at one address
      [
        args({ nodes: [initFiles[0]!, edit(1, (o) => (o.node_ip = '10.0.0.1')), ...initFiles.slice(2)] }),
        /the address 10\.0\.0\.1:9701 is also that of .*node1\.json \(Node1\)$/,
      ],
      // two nodes with one alias
      [args({ nodes: [initFiles[0]!, edit(1, (o) => (o.name = 'Node1')), ...initFiles.slice(2)] }), /the alias Node1 is also that of/],
      // one node twice (same key)
      [args({ nodes: [initFiles[0]!, initFiles[0]!, ...initFiles.slice(2)] }), /is also that of/],
      // one steward for two nodes
      [args({ stewards: [id(stewards[0]!), id(stewards[0]!), id(stewards[2]!), id(stewards[3]!)] }), /--steward 2: the DID .* \(one node per steward/],
      // fewer stewards than nodes
      [args({ stewards: stewards.slice(0, 3).map(id) }), /one steward per node, in the order of the nodes: 4 nodes, 3 stewards$/],
      // no addresses in the init output
      [args({ nodes: [edit(0, (o) => delete o.client_ip), ...initFiles.slice(1)] }), /client_ip: a non-empty string is needed/],
      [args({ nodes: [edit(0, (o) => (o.node_port = 70000)), ...initFiles.slice(1)] }), /node_port: a port from 1 to 65535 is needed/],
      // a steward whose verkey is not a verkey
      [args({ stewards: [`${stewards[0]!.did}:nonsense0OIl`, ...stewards.slice(1).map(id)] }), /--steward 1: "nonsense0OIl" is not a verkey/],
      [args({ stewards: ['no-colon', ...stewards.slice(1).map(id)] }), /--steward 1: expected DID:VERKEY/],
      // an unreadable node file
      [args({ nodes: [join(dir, 'missing.json'), ...initFiles.slice(1)] }), /missing\.json: ENOENT$/],
    ];
    for (const [argv, pattern] of cases) {
      const r = await run(argv.map((a) => a.replace('/out', '/refused')));
      expect(r.code, argv.join(' ')).to.equal(1);
      expect(r.err, argv.join(' ')).to.have.length(1);
      expect(r.err[0], argv.join(' ')).to.match(/^genesis generation: /);
      expect(r.err[0]).to.match(pattern);
    }
  });
});
