// VALIDATOR_INFO (requests.md §7.5) on four QuireNodes in this process, through @quire/client's
// Pool: a trustee, a steward and a network monitor each get one REPLY per node whose `data`
// describes that node (its own alias, ports, ledgers, the pool as it sees it, software, hardware,
// configuration without secrets); a DID without a role gets a REJECT from every node (after a
// REQACK), with the auth-rules.md reason. Nothing is written.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DidKey, NodeConnection, Pool, buildNymRequest, buildValidatorInfoRequest, signRequest, type NodeAnswer } from '@quire/client';
import { CLIENT_PROTOCOL, b58encode, parseJson, signatureInput, stringifyJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NODE_PROTOCOL } from '@quire/network';
import { type NodeConfig, defaultNodeConfig, mergeConfig } from '../../src/config.js';
import { TRUSTEE_SEED, nodeSeed, poolGenesis, standardPoolNodes, stewardSeed, writeGenesisFiles } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { nodePackageVersion } from '../../src/version.js';
import { freePort, waitFor } from './support.js';

const N = 4;
const td = new TextDecoder();
const te = new TextEncoder();

interface Info {
  version: string;
  timestamp: number;
  node: {
    alias: string;
    dest: string;
    blskey: string | null;
    ports: { node: number; client: number; metrics: number | null };
    uptimeSec: number;
    mode: string;
    view: { viewNo: number };
    primary: string;
    isPrimary: boolean;
    lastOrdered: { viewNo: number; ppSeqNo: number };
    ledgers: Record<string, { id: number; size: number; root: string; stateRoot?: string }>;
    catchup: { catchingUp: boolean };
  };
  pool: {
    validators: string[];
    n: number;
    f: number;
    reachable: { count: number; nodes: string[] };
    unreachable: { count: number; nodes: string[] };
    readOnly: boolean;
  };
  protocol: { requestProtocolVersion: number; nodeProtocol: string; clientProtocol: string; poolId: string };
  software: { package: string; version: string; packageVersion: string; node: string; os: { platform: string } };
  hardware: { cpus: { count: number }; memory: { totalBytes: number; processRssBytes: number }; disk: { dataDirBytes: number | null } };
  configuration: Record<string, unknown>;
}

describe('e2e: VALIDATOR_INFO on a 4-node pool', function () {
  this.timeout(90_000);
  let dir: string;
  let genesisFile: string;
  let config: NodeConfig;
  let ports: { nodePort: number; clientPort: number }[];
  const nodes: QuireNode[] = [];
  let pool: Pool | undefined;
  const trustee = DidKey.fromSeed(TRUSTEE_SEED);
  const steward = DidKey.fromSeed(stewardSeed(2));
  const monitor = DidKey.fromSeed('00000000000000000000000Monitor01');
  const plain = DidKey.fromSeed('0000000000000000000000000Plain01');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-vinfo-'));
    ports = [];
    for (let i = 0; i < N; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    const g = await writeGenesisFiles(dir, poolGenesis(standardPoolNodes(ports)));
    genesisFile = g.pool;
    config = mergeConfig(defaultNodeConfig, { poolGenesisFile: g.pool, domainGenesisFile: g.domain, durable: false });
    for (let i = 1; i <= N; i++) {
      const keys = deriveNodeKeys(`Node${i}`, Buffer.from(nodeSeed(`Node${i}`)));
      nodes.push(await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: testLogger(`Node${i}`), keys }));
    }
    pool = await Pool.open(genesisFile, { writeTimeoutMs: 30_000, actionTimeoutMs: 15_000 });
    // a network monitor and a DID without a role
    await pool.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: monitor.did, verkey: monitor.verkey, role: '201' }), trustee));
    await pool.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: plain.did, verkey: plain.verkey }), trustee));
    // every node has ordered both and sees its three peers
    await waitFor(
      'every node connected to its peers and at domain size 7',
      async () => (nodes.every((n) => n.stores.ledgers[1].size === 7) ? true : undefined),
      30_000,
    );
  });

  after(async () => {
    await pool?.close();
    for (const n of nodes) await n.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function ask(key: DidKey): Promise<Map<string, NodeAnswer>> {
    return pool!.submitAction(signRequest(buildValidatorInfoRequest({ submitter: key.did }), key));
  }

  function infoOf(a: NodeAnswer | undefined, who: string): Info {
    if (a === undefined) return expect.fail(`${who}: no answer`);
    if (a.kind !== 'reply') return expect.fail(`${who}: ${a.kind} ${a.kind === 'error' ? a.error.message : a.reason}`);
    const result = a.message.result as Record<string, unknown>;
    expect(result).to.include({ type: '119' });
    return result.data as Info;
  }

  for (const [role, key] of [
    ['a trustee', () => trustee],
    ['a steward', () => steward],
    ['a network monitor', () => monitor],
  ] as const) {
    it(`${role} gets one REPLY per node, each describing that node`, async () => {
      const sizes = nodes.map((n) => [0, 1, 2, 3].map((l) => n.stores.ledgers[l as 0 | 1 | 2 | 3].size));
      const k = key();
      const answers = await ask(k);
      expect([...answers.keys()].sort()).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
      const primaries = new Set<string>();
      for (const [i, node] of nodes.entries()) {
        const alias = `Node${i + 1}`;
        const a = answers.get(alias)!;
        const info = infoOf(a, alias);
        const result = (a as Extract<NodeAnswer, { kind: 'reply' }>).message.result as Record<string, unknown>;
        expect(result.identifier).to.equal(k.did);
        expect(info.version).to.equal('1');
        expect(Math.abs(info.timestamp - Date.now() / 1000)).to.be.below(60);
        // node
        expect(info.node.alias).to.equal(alias);
        expect(info.node.dest).to.equal(standardPoolNodes(ports)[i]!.keys.dest);
        expect(info.node.blskey).to.equal(standardPoolNodes(ports)[i]!.keys.blskey);
        expect(info.node.ports).to.deep.equal({ node: ports[i]!.nodePort, client: ports[i]!.clientPort, metrics: null });
        expect(info.node.uptimeSec).to.be.at.least(0).and.below(120);
        expect(info.node.mode).to.equal('participating');
        expect(info.node.view.viewNo).to.equal(node.status().viewNo);
        expect(info.node.isPrimary).to.equal(info.node.primary === alias);
        primaries.add(info.node.primary);
        expect(info.node.lastOrdered.ppSeqNo).to.be.at.least(2);
        expect(info.node.catchup.catchingUp).to.equal(false);
        expect(Object.keys(info.node.ledgers)).to.deep.equal(['pool', 'domain', 'config', 'audit']);
        expect(info.node.ledgers.domain!.size).to.equal(7);
        expect(info.node.ledgers.pool!.size).to.equal(4);
        for (const [name, lid] of [
          ['pool', 0],
          ['domain', 1],
          ['config', 2],
          ['audit', 3],
        ] as const) {
          expect(info.node.ledgers[name]!.root, name).to.equal(b58encode(node.stores.ledgers[lid].root));
          if (lid !== 3) expect(info.node.ledgers[name]!.stateRoot, name).to.equal(b58encode(node.stores.states[lid].committedRoot));
        }
        // pool
        expect(info.pool).to.deep.include({ validators: ['Node1', 'Node2', 'Node3', 'Node4'], n: 4, f: 1, readOnly: false });
        expect(info.pool.reachable).to.deep.equal({ count: 4, nodes: ['Node1', 'Node2', 'Node3', 'Node4'] });
        expect(info.pool.unreachable).to.deep.equal({ count: 0, nodes: [] });
        // protocol, software, hardware
        expect(info.protocol).to.deep.include({ requestProtocolVersion: 2, nodeProtocol: NODE_PROTOCOL, clientProtocol: CLIENT_PROTOCOL, poolId: node.poolId });
        expect(info.software).to.deep.include({
          package: 'quire-node',
          version: node.upgrades.currentVersion,
          packageVersion: nodePackageVersion(),
          node: process.version,
        });
        expect(info.software.os.platform).to.equal(process.platform);
        expect(info.hardware.cpus.count).to.be.at.least(1);
        expect(info.hardware.memory.totalBytes).to.be.greaterThan(info.hardware.memory.processRssBytes);
        expect(info.hardware.disk.dataDirBytes).to.be.a('number');
        // configuration: the effective config, no secret
        expect(info.configuration).to.deep.include({ poolGenesisFile: config.poolGenesisFile, durable: false, keysFile: 'node-keys.json' });
        expect(info.configuration.limits).to.deep.equal(config.limits);
        const text = stringifyJson(result);
        expect(text).to.not.match(/seed/i);
        expect(text).to.not.contain(nodeSeed(alias));
        expect(text).to.not.contain(Buffer.from(nodeSeed(alias)).toString('hex'));
      }
      expect(primaries.size, 'every node names the same primary').to.equal(1);
      // an action: nothing was written anywhere
      expect(nodes.map((n) => [0, 1, 2, 3].map((l) => n.stores.ledgers[l as 0 | 1 | 2 | 3].size))).to.deep.equal(sizes);
    });
  }

  it('a DID without a role gets REQACK then REJECT from every node, with the auth-rules.md reason', async () => {
    const answers = await ask(plain);
    expect(answers.size).to.equal(N);
    for (const [alias, a] of answers) {
      expect(a.kind, alias).to.equal('reject');
      const r = a as Extract<NodeAnswer, { kind: 'nack' | 'reject' }>;
      expect(r.reason).to.contain('UnauthorizedClientRequest');
      expect(r.reason).to.contain(
        'Rule for this action is: 1 TRUSTEE signature is required OR 1 STEWARD signature is required OR 1 NETWORK_MONITOR signature is required',
      );
      expect(r.reason).to.contain('Not enough NETWORK_MONITOR signatures');
      expect(r.code).to.equal(null);
    }
    // on the wire: REQACK first, the REJECT pushed after it
    const req = signRequest(buildValidatorInfoRequest({ submitter: plain.did }), plain);
    const conn = await NodeConnection.connect({
      host: '127.0.0.1',
      port: ports[0]!.clientPort,
      dest: standardPoolNodes(ports)[0]!.keys.dest,
      timeoutMs: 10_000,
    });
    try {
      const pushed = new Promise<Record<string, unknown>>((res) => conn.on('push', (b: Uint8Array) => res(parseJson(td.decode(b)) as Record<string, unknown>)));
      const first = parseJson(td.decode(await conn.request(te.encode(stringifyJson(req))))) as Record<string, unknown>;
      expect(first).to.deep.equal({ op: 'REQACK', identifier: plain.did, reqId: req.reqId });
      expect(await pushed).to.deep.include({ op: 'REJECT', identifier: plain.did, reqId: req.reqId, code: null });
    } finally {
      await conn.close();
    }
  });

  it('a stopped node is reported unreachable by the others', async () => {
    await nodes[3]!.close();
    const info = await waitFor(
      'Node1 to see Node4 gone',
      async () => {
        const a = (await pool!.submitAction(signRequest(buildValidatorInfoRequest({ submitter: trustee.did }), trustee), { nodes: ['Node1'] })).get('Node1');
        const i = infoOf(a, 'Node1');
        return i.pool.unreachable.count === 1 ? i : undefined;
      },
      20_000,
      300,
    );
    expect(info.pool.unreachable).to.deep.equal({ count: 1, nodes: ['Node4'] });
    expect(info.pool.reachable).to.deep.equal({ count: 3, nodes: ['Node1', 'Node2', 'Node3'] });
  });

  it('an unknown signer is refused before authorization (REQNACK)', async () => {
    const stranger = Ed25519Signer.fromSeed('0000000000000000000000Stranger01');
    const req: Record<string, unknown> = { identifier: stranger.did, reqId: 77, protocolVersion: 2, operation: { type: '119' } };
    req.signature = stranger.signBase58(signatureInput(req));
    const conn = await NodeConnection.connect({
      host: '127.0.0.1',
      port: ports[1]!.clientPort,
      dest: standardPoolNodes(ports)[1]!.keys.dest,
      timeoutMs: 10_000,
    });
    try {
      const r = parseJson(td.decode(await conn.request(te.encode(JSON.stringify(req))))) as Record<string, unknown>;
      expect(r).to.include({ op: 'REQNACK', identifier: stranger.did, reqId: 77 });
      expect(String(r.reason)).to.contain(`could not authenticate, verkey for ${stranger.did} cannot be found`);
    } finally {
      await conn.close();
    }
  });
});
