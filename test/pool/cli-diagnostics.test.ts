// Whole-pool acceptance of what `quire` says when something goes wrong (#18): pool status asks every node, a read
// that finds nothing, refusals whose Indy text says nothing get a hint, a closed pipe after a write, and a pool that
// lost its quorum. The exit status and the exact first line printed are asserted; the destructive scenario is last.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { DidKey } from '@quire/client';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
import { quireArgv, quireOk, runQuire } from '../support/client.js';
import { REPO_ROOT } from '../../devnet/lib/layout.js';
import { TestPool } from '../support/test-pool.js';

const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const uniq = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const firstLine = (text: string): string => text.split('\n')[0]!;

describe('whole pool: quire diagnostics', function () {
  this.timeout(300_000);
  let pool: TestPool;
  const g = (): string[] => ['--genesis', pool.genesisFile];

  before(async () => {
    pool = await TestPool.start({ name: 'cli-diag', orderingTimeoutMs: 180_000 });
  });
  after(async () => {
    await pool?.close();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool?.dumpLogs(`failed: ${this.currentTest.title}`);
  });

  it('pool status asks every node: "Pool: 4 of 4 validators answered (quorum 3)", exit 0', async () => {
    const r = await runQuire([...g(), 'pool', 'status']);
    expect(r.code, r.stderr).to.equal(0);
    expect(firstLine(r.stdout)).to.equal('Pool: 4 of 4 validators answered (quorum 3)');
    expect(r.stdout.split('\n').filter((l) => / {2}Node\d .* answered$/.test(l))).to.have.length(4);
  });

  it('a read of a missing schema says "not found" (verified) and exits 1', async () => {
    const name = `missing${uniq()}`;
    const r = await runQuire([...g(), 'get-schema', '--dest', trustee.did, '--name', name, '--version', '1.0']);
    expect(r.code, r.stderr).to.equal(1);
    expect(firstLine(r.stdout)).to.equal(`not found: schema '${name}' version '1.0' by DID ${trustee.did}`);
    expect(r.stdout).to.contain('verified by state proof');
    const nym = await runQuire([...g(), 'get-nym', '--dest', DidKey.random().did]);
    expect(nym.code).to.equal(1);
    expect(firstLine(nym.stdout)).to.match(/^not found: DID \w+$/);
  });

  it('a duplicate SCHEMA keeps the Indy reason and gets the hint', async () => {
    const args = [...g(), '--seed', TRUSTEE_SEED, 'schema', '--name', `dup${uniq()}`, '--version', '1.0', '--attrs', 'a,b'];
    await quireOk(args);
    const r = await runQuire(args);
    expect(r.code).to.equal(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).to.match(
      new RegExp(
        `^error: request refused by the pool \\((REJECT|REQNACK)\\): client request invalid: UnauthorizedClientRequest\\('${trustee.did}', \\d+, 'The action is forbidden'\\)$`,
      ),
    );
    expect(lines[1]).to.equal('hint: a schema with this name and version already exists for this DID (a schema cannot be changed: publish a new version)');
  });

  it("a trustee editing another DID's alias: the empty Indy reason gets a hint", async () => {
    const owner = DidKey.random();
    await quireOk([...g(), '--seed', TRUSTEE_SEED, 'nym', '--dest', owner.did, '--verkey', owner.verkey]);
    const r = await runQuire([...g(), '--seed', TRUSTEE_SEED, 'nym', '--dest', owner.did, '--alias', 'renamed']);
    expect(r.code).to.equal(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).to.match(
      new RegExp(
        `^error: request refused by the pool \\((REJECT|REQNACK)\\): client request invalid: UnauthorizedClientRequest\\('${trustee.did}', \\d+, ''\\)$`,
      ),
    );
    expect(lines[1]).to.match(/^hint: only the DID's owner may change it/);
  });

  it('a write whose reader closed the pipe (quire nym ... | head -0) is committed and ends quietly with exit 0', async () => {
    const dest = DidKey.random().did;
    const [exe, ...pre] = quireArgv();
    const child = spawn(exe!, [...pre, ...g(), '--seed', TRUSTEE_SEED, 'nym', '--dest', dest], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
    expect(await quireOk([...g(), 'get-nym', '--dest', dest])).to.contain(dest);
  });

  it('with 2 of 4 nodes stopped: pool status and a write say "no quorum: 2 of 4 answered, 3 needed", exit 1', async () => {
    await pool.node('Node3').stop();
    await pool.node('Node4').stop();
    const st = await runQuire([...g(), '--timeout', '5000', 'pool', 'status']);
    expect(st.code).to.equal(1);
    expect(firstLine(st.stdout)).to.equal('no quorum: 2 of 4 answered, 3 needed');
    expect(firstLine(st.stderr)).to.equal('error: no quorum: 2 of 4 answered, 3 needed');
    const w = await runQuire([...g(), '--seed', TRUSTEE_SEED, '--timeout', '8000', 'nym', '--dest', DidKey.random().did]);
    expect(w.code).to.equal(1);
    expect(firstLine(w.stderr)).to.equal('error: no quorum: 2 of 4 answered, 3 needed');
  });
});
