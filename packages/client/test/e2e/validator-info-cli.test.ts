// `quire validator-info` against four real client hosts (@quire/network's ClientHost) that answer
// as nodes do: the signed VALIDATOR_INFO goes to every node, each node's answer is printed on its
// own line (REPLY result, REJECT reason, or transport error), all of them as one JSON map with
// --json, and the command fails when every node refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode, parseJson, signatureInput, stringifyJson } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { ClientHost } from '@quire/network';
import { main } from '../../src/cli/main.js';
import { DidKey } from '../../src/index.js';
import { NODE_NAMES, nodeSeed, poolGenesis } from '../unit/fixtures.js';

const enc = new TextEncoder();
const TRUSTEE_SEED = '000000000000000000000000Trustee1';
const trustee = DidKey.fromSeed(TRUSTEE_SEED);

type Answer = (req: Record<string, unknown>) => Record<string, unknown>[];

async function runCli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('quire validator-info (4 client hosts)', function () {
  this.timeout(30_000);
  const hosts: ClientHost[] = [];
  const answers: (Answer | undefined)[] = [];
  const received: Record<string, unknown>[][] = [[], [], [], []];
  let dir: string;
  let genesis: string;

  before(async () => {
    for (let i = 0; i < 4; i++) {
      const h = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), host: '127.0.0.1', port: 0 });
      h.on('request', (clientId, bytes, respond, info) => {
        const req = parseJson(bytes) as Record<string, unknown>;
        received[i]!.push(req);
        const [first, ...later] = answers[i]?.(req) ?? [];
        if (first !== undefined) respond(enc.encode(stringifyJson(first)));
        for (const m of later) h.push(clientId, enc.encode(stringifyJson(m)), info.requestId);
      });
      hosts.push(h);
    }
    dir = mkdtempSync(join(tmpdir(), 'quire-vinfo-cli-'));
    genesis = join(dir, 'pool_transactions_genesis');
    writeFileSync(genesis, poolGenesis({ ports: hosts.map((h) => h.port) }));
  });

  after(async () => {
    await Promise.all(hosts.map((h) => h.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const ack = (req: Record<string, unknown>): Record<string, unknown> => ({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });

  it('sends the signed request to every node and prints one line per node', async () => {
    for (let i = 0; i < 4; i++) {
      received[i]!.length = 0;
      answers[i] =
        i === 3
          ? (req) => [ack(req), { op: 'REJECT', identifier: req.identifier, reqId: req.reqId, reason: 'no info today', code: null }]
          : (req) => [
              ack(req),
              { op: 'REPLY', result: { ...(req.operation as object), identifier: req.identifier, reqId: req.reqId, data: { node: { alias: NODE_NAMES[i] } } } },
            ];
    }
    const r = await runCli(['--genesis', genesis, '--seed', TRUSTEE_SEED, 'validator-info']);
    expect(r.code, r.err.join('\n')).to.equal(0);
    expect(r.out).to.have.length(4);
    for (let i = 0; i < 3; i++) {
      const line = r.out.find((l) => l.startsWith(`${NODE_NAMES[i]}: `))!;
      const result = parseJson(line.slice(NODE_NAMES[i]!.length + 2)) as Record<string, unknown>;
      expect(result).to.deep.include({ type: '119', identifier: trustee.did, data: { node: { alias: NODE_NAMES[i] } } });
    }
    expect(r.out.find((l) => l.startsWith('Node4: '))).to.equal('Node4: {"op":"REJECT","reason":"no info today"}');
    // one request per node, signed by the trustee, operation {type: "119"} only
    const reqIds = new Set<string>();
    for (let i = 0; i < 4; i++) {
      expect(received[i]).to.have.length(1);
      const req = received[i]![0]!;
      expect(req.operation).to.deep.equal({ type: '119' });
      expect(req.identifier).to.equal(trustee.did);
      expect(req.protocolVersion).to.equal(2);
      expect(ed25519Verify(trustee.publicKey, signatureInput(req), b58decode(req.signature as string))).to.equal(true);
      reqIds.add(String(req.reqId));
    }
    expect(reqIds.size).to.equal(1);
  });

  it('--json prints every node in one JSON map', async () => {
    for (let i = 0; i < 4; i++)
      answers[i] = (req) => [ack(req), { op: 'REPLY', result: { ...(req.operation as object), identifier: req.identifier, reqId: req.reqId, data: { n: i } } }];
    const r = await runCli(['--genesis', genesis, '--seed', TRUSTEE_SEED, '--json', 'validator-info']);
    expect(r.code, r.err.join('\n')).to.equal(0);
    const map = parseJson(r.out[0]!) as Record<string, { data: { n: number } }>;
    expect(Object.keys(map).sort()).to.deep.equal([...NODE_NAMES].sort());
    for (let i = 0; i < 4; i++) expect(map[NODE_NAMES[i]!]!.data.n).to.equal(i);
  });

  it('fails with the reason when every node refuses', async () => {
    const reason = "client request invalid: UnauthorizedClientRequest('x', 1, 'Rule for this action is: ...')";
    for (let i = 0; i < 4; i++) answers[i] = (req) => [ack(req), { op: 'REJECT', identifier: req.identifier, reqId: req.reqId, reason, code: null }];
    const r = await runCli(['--genesis', genesis, '--seed', TRUSTEE_SEED, 'validator-info']);
    expect(r.code).to.equal(1);
    expect(r.out).to.have.length(4);
    expect(r.err.join('\n')).to.contain('Rule for this action is');
  });

  it('a dry run prints the signed request without sending it', async () => {
    for (const r of received) r.length = 0;
    const r = await runCli(['--genesis', genesis, '--seed', TRUSTEE_SEED, '--dry-run', 'validator-info']);
    expect(r.code, r.err.join('\n')).to.equal(0);
    const req = parseJson(r.out[0]!) as Record<string, unknown>;
    expect(req.operation).to.deep.equal({ type: '119' });
    expect(ed25519Verify(trustee.publicKey, signatureInput(req), b58decode(req.signature as string))).to.equal(true);
    expect(received.every((x) => x.length === 0)).to.equal(true);
  });
});
