// What quire prints when something goes wrong, without a running pool: the first line of each diagnosis and the exit
// status (nodes that refuse connections, nodes that accept and never answer, replies built by hand).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ClientError, ClientErrorCode } from '../../src/errors.js';
import { main } from '../../src/cli/main.js';
import { Context } from '../../src/cli/context.js';
import { CliExit, errorLines, reasonHint } from '../../src/cli/diagnostics.js';
import { buildGetSchemaRequest } from '../../src/index.js';
import { poolGenesis } from './fixtures.js';
import { SOURCE_RUN_ARGS, waitUntil } from '@quire/testing';

async function runCli(argv: string[], stop?: AbortSignal): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, stop === undefined ? {} : { stop });
  return { code, out, err };
}

const TRUSTEE_SEED = '000000000000000000000000Trustee1';
const TRUSTEE_DID = 'V4SGRU86Z58d6TV7PBUe6f';
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';

/** Free loopback ports, closed again: a node there refuses connections. */
async function closedPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    ports.push((s.address() as { port: number }).port);
    await new Promise<void>((r) => s.close(() => r()));
  }
  return ports;
}

/** Listeners that accept connections and never say anything: a node that hangs. `received` counts the bytes a client sent. */
async function silentNodes(count: number): Promise<{ ports: number[]; received: () => number; close: () => Promise<void> }> {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  let received = 0;
  for (let i = 0; i < count; i++) {
    const s = createServer((c) => {
      sockets.push(c);
      c.on('data', (d: Buffer) => (received += d.length));
      c.on('error', () => undefined);
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    servers.push(s);
  }
  return {
    ports: servers.map((s) => (s.address() as { port: number }).port),
    received: () => received,
    close: async () => {
      for (const c of sockets) c.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}

describe('quire CLI diagnostics (no pool)', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'quire-cli-diag-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a closed stdout (quire ... | head -0) ends quietly with exit 0, no stack trace', async () => {
    // the CLI from its sources, as a separate process whose stdout the reader closes before anything is printed
    const bin = new URL('../../../../test/support/bin/quire.ts', import.meta.url).pathname;
    const child = spawn(process.execPath, [...SOURCE_RUN_ARGS, bin, 'did', 'new', '--seed', TRUSTEE_SEED], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
  });

  it('--version prints "quire <version>" and exits 0', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code).to.equal(0);
      expect(r.out[0]).to.equal(`quire ${pkg.version}`);
    }
  });

  it('an unknown option prints the error, a usage line and "see --help" (not the whole help), exit 1', async () => {
    const r = await runCli(['--frobnicate', 'get-nym']);
    expect(r.code).to.equal(1);
    expect(r.err).to.deep.equal(["error: unknown option '--frobnicate'", 'usage: quire [options] [command]', "see 'quire --help'"]);
    const sub = await runCli(['nym', '--dest', DEST, '--bogus']);
    expect(sub.code).to.equal(1);
    expect(sub.err[0]).to.equal("error: unknown option '--bogus'");
    expect(sub.err.slice(1)).to.deep.equal(['usage: quire nym [options]', "see 'quire nym --help'"]);
    expect(sub.err.length + sub.out.length).to.be.lessThan(5);
    const nested = await runCli(['pool', 'status', '--nope']);
    expect(nested.err).to.deep.equal(["error: unknown option '--nope'", 'usage: quire pool status [options]', "see 'quire pool status --help'"]);
    const missing = await runCli(['get-schema', '--dest', DEST]);
    expect(missing.code).to.equal(1);
    expect(missing.err[0]).to.equal("error: required option '--name <name>' not specified");
    expect(missing.err[1]).to.equal('usage: quire get-schema [options]');
  });

  it('pool status contacts every node: none answers -> "no quorum: 0 of 4 answered, 3 needed", exit 1', async () => {
    const file = join(dir, 'down.txn');
    writeFileSync(file, poolGenesis({ ports: await closedPorts(4) }));
    const r = await runCli(['--genesis', file, '--timeout', '5000', 'pool', 'status']);
    expect(r.code).to.equal(1);
    expect(r.out[0]).to.equal('no quorum: 0 of 4 answered, 3 needed');
    expect(r.err[0]).to.equal('error: no quorum: 0 of 4 answered, 3 needed');
    expect(r.out.filter((l) => / {2}Node\d .*no answer: /.test(l))).to.have.length(4);
  });

  it('a write no node answers -> "error: no quorum: 0 of 4 answered, 3 needed", exit 1', async () => {
    const file = join(dir, 'down-w.txn');
    writeFileSync(file, poolGenesis({ ports: await closedPorts(4) }));
    const r = await runCli(['--genesis', file, '--seed', TRUSTEE_SEED, '--timeout', '5000', 'nym', '--dest', DEST]);
    expect(r.code).to.equal(1);
    expect(r.err[0], r.err.join('\n')).to.equal('error: no quorum: 0 of 4 answered, 3 needed');
    expect(r.err.filter((l) => /^ {2}Node\d: NODE_UNREACHABLE/.test(l)).length).to.be.within(3, 4);
  });

  it('Ctrl-C during a write says it may still be committed and how to check, exit 130', async () => {
    const nodes = await silentNodes(4);
    try {
      const file = join(dir, 'silent.txn');
      writeFileSync(file, poolGenesis({ ports: nodes.ports }));
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), 1_500);
      const r = await runCli(['--genesis', file, '--seed', TRUSTEE_SEED, '--timeout', '600000', 'nym', '--dest', DEST], stop.signal);
      clearTimeout(timer);
      expect(r.code, r.err.join('\n')).to.equal(130);
      expect(r.err[0]).to.equal('interrupted: the write was sent to the pool and may still be committed');
      expect(r.err[1]).to.equal(`check with: quire get-nym --dest ${DEST}`);
      const saved = /--request-file (\S+)/.exec(r.err[2] ?? '')?.[1];
      expect(saved, r.err.join('\n')).to.be.a('string');
      const req = JSON.parse(readFileSync(saved!, 'utf8')) as { operation: { dest: string }; signature: string };
      expect(req.operation.dest).to.equal(DEST);
      expect(req.signature).to.be.a('string');
      rmSync(saved!, { force: true });
    } finally {
      await nodes.close();
    }
  });

  it('a real SIGINT (Ctrl-C) to a quire process whose write is on its way: the same three lines on stderr, exit 130', async () => {
    const nodes = await silentNodes(4);
    let child: ReturnType<typeof spawn> | undefined;
    try {
      const file = join(dir, 'silent-sigint.txn');
      writeFileSync(file, poolGenesis({ ports: nodes.ports }));
      const bin = new URL('../../../../test/support/bin/quire.ts', import.meta.url).pathname;
      child = spawn(process.execPath, [...SOURCE_RUN_ARGS, bin, '--genesis', file, '--seed', TRUSTEE_SEED, '--timeout', '600000', 'nym', '--dest', DEST], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = child;
      let stdout = '';
      let stderr = '';
      proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exit = new Promise<number | null>((resolve) => proc.once('close', (c) => resolve(c)));
      // the first bytes a node receives are sent after the write's Ctrl-C handler is in place (the dial answers an
      // I/O event; the handler is installed in the same turn as the pool is opened)
      await waitUntil('a node contacted, or the process ended', () => nodes.received() > 0 || proc.exitCode !== null, 50_000, 100);
      expect(nodes.received(), `no node was contacted; stderr: ${stderr}`).to.be.greaterThan(0);
      proc.kill('SIGINT');
      const code = await exit;
      const lines = stderr.trim().split('\n');
      expect(code, stderr).to.equal(130);
      expect(stdout).to.equal('');
      expect(lines[0]).to.equal('interrupted: the write was sent to the pool and may still be committed');
      expect(lines[1]).to.equal(`check with: quire get-nym --dest ${DEST}`);
      const saved = /--request-file (\S+)/.exec(lines[2] ?? '')?.[1];
      expect(saved, stderr).to.be.a('string');
      rmSync(saved!, { force: true });
    } finally {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await nodes.close();
    }
  });

  it('a read that finds nothing prints "not found: ..." and exits 1 (a missing schema is not a verified {name, version})', async () => {
    const out: string[] = [];
    const ctx = new Context({}, { out: (l) => out.push(l), err: () => undefined });
    const req = buildGetSchemaRequest({ dest: TRUSTEE_DID, name: 'degree', version: '1.0' });
    const reply = {
      result: { type: '107', dest: TRUSTEE_DID, data: { name: 'degree', version: '1.0' }, seqNo: null, txnTime: null },
      verified: true,
      nodes: ['Node2'],
      rejected: [],
    };
    expect(() => ctx.printRead(reply, req))
      .to.throw(CliExit)
      .with.property('exitCode', 1);
    expect(out[0]).to.equal(`not found: schema 'degree' version '1.0' by DID ${TRUSTEE_DID}`);
    out.length = 0;
    const found = { ...reply, result: { ...reply.result, data: { name: 'degree', version: '1.0', attr_names: ['a'] }, seqNo: 12, txnTime: 1 } };
    ctx.printRead(found, req);
    expect(out[0]).to.match(/^\{\n {2}"name": "degree"/);
    out.length = 0;
    expect(() => ctx.printRead({ ...reply, result: { type: '105', dest: DEST, data: null } }, { ...req, operation: { type: '105', dest: DEST } })).to.throw(
      CliExit,
    );
    expect(out[0]).to.equal(`not found: DID ${DEST}`);
  });

  it('pool reasons keep their Indy text and code and get a hint where the text says nothing', () => {
    const dup = new ClientError(ClientErrorCode.REQUEST_REJECTED, {
      reason: `client request invalid: UnauthorizedClientRequest('${TRUSTEE_DID}', 1764000000000000000, 'The action is forbidden')`,
      code: null,
      nodes: ['Node1', 'Node2'],
    });
    expect(errorLines(dup, { requestType: '101' })).to.deep.equal([
      `error: request refused by the pool (REJECT): client request invalid: UnauthorizedClientRequest('${TRUSTEE_DID}', 1764000000000000000, 'The action is forbidden')`,
      'hint: a schema with this name and version already exists for this DID (a schema cannot be changed: publish a new version)',
    ]);
    const alias = new ClientError(ClientErrorCode.REQUEST_REJECTED, {
      reason: `client request invalid: UnauthorizedClientRequest('${TRUSTEE_DID}', 17, '')`,
      code: null,
      nodes: ['Node1', 'Node2'],
    });
    const lines = errorLines(alias, { requestType: '1' });
    expect(lines[0]).to.equal(`error: request refused by the pool (REJECT): client request invalid: UnauthorizedClientRequest('${TRUSTEE_DID}', 17, '')`);
    expect(lines[1]).to.match(/^hint: only the DID's owner may change it/);
    const taa = new ClientError(ClientErrorCode.REQUEST_REJECTED, {
      reason: 'Txn Author Agreement acceptance is required for ledger with id 1',
      code: 201,
      nodes: ['Node1', 'Node2'],
    });
    expect(errorLines(taa, { requestType: '1' })).to.deep.equal([
      'error: request refused by the pool (REJECT [code 201]): Txn Author Agreement acceptance is required for ledger with id 1',
      'hint: accept the agreement: add --taa-mechanism <label> once (see quire get-taa and get-taa-aml); later writes to this pool carry it',
    ]);
    const plain = new ClientError(ClientErrorCode.REQUEST_NACKED, {
      reason: "client request invalid: InvalidClientRequest('x', 1, 'validation error [ClientNodeOperation]: invalid network ip address')",
      code: null,
      nodes: ['Node1', 'Node2'],
    });
    expect(errorLines(plain, { requestType: '0' })).to.have.length(1);
    expect(reasonHint('101', 'anything else')).to.equal(undefined);
  });

  it('a write that got too few answers says how many answered and how many were needed', () => {
    const e = new ClientError(ClientErrorCode.TIMEOUT, {
      timeoutMs: 30000,
      replies: [],
      errors: [
        { node: 'Node3', code: 'NODE_UNREACHABLE', reason: 'connection refused' },
        { node: 'Node4', code: 'NODE_UNREACHABLE' },
      ],
      answered: ['Node1', 'Node2'],
      n: 4,
    });
    const lines = errorLines(e, { shape: { n: 4, f: 1 } });
    expect(lines[0]).to.equal('error: no quorum: 2 of 4 answered, 3 needed');
    expect(lines).to.include('  Node3: NODE_UNREACHABLE (connection refused)');
    const seven = errorLines(
      new ClientError(ClientErrorCode.TIMEOUT, {
        timeoutMs: 30000,
        replies: [],
        errors: [1, 2, 3, 4, 5].map((i) => ({ node: `Node${i}`, code: 'NODE_UNREACHABLE' })),
        answered: ['Node6', 'Node7'],
        n: 7,
      }),
      { shape: { n: 7, f: 2 } },
    );
    expect(seven[0]).to.equal('error: no quorum: 2 of 7 answered, 5 needed');
    // given up before the deadline: the nodes that gave a final answer answered, the others did not (yet)
    const early = errorLines(
      new ClientError(ClientErrorCode.NO_CONSENSUS, {
        replies: [{ kind: 'nack', nodes: ['Node1'], reason: 'x' }],
        errors: [2, 3, 4].map((i) => ({ node: `Node${i}`, code: 'NODE_UNREACHABLE' })),
        answered: ['Node1'],
        n: 4,
      }),
      { shape: { n: 4, f: 1 } },
    );
    expect(early[0]).to.equal('error: no quorum: 1 of 4 answered, 3 needed');
    expect(early).to.include('  nack from Node1: x');
    const disagree = errorLines(
      new ClientError(ClientErrorCode.NO_CONSENSUS, {
        replies: [1, 2, 3, 4].map((i) => ({ kind: 'reply', nodes: [`Node${i}`] })),
        errors: [],
        answered: ['Node1', 'Node2', 'Node3', 'Node4'],
        n: 4,
      }),
      { shape: { n: 4, f: 1 } },
    );
    expect(disagree[0]).to.equal('error: no agreement: the nodes answered but no 2 of them gave the same answer');
  });
});
