// Whole-pool acceptance of Indy's ledger-administration requests (issue #21, requests.md 7.2 and 7.3) on four real
// quire-node processes, through the SDK and the `quire` CLI (a child process):
// - TXN_AUTHOR_AGREEMENT_DISABLE: with an agreement in force a domain write needs an acceptance; `quire taa-disable`
//   turns it off, GET_TAA then proves no latest agreement, the agreement's record says it is retired, domain writes
//   go through without acceptance, a second disable is refused; a new agreement enables acceptance again.
// - LEDGERS_FREEZE / GET_FROZEN_LEDGERS: the base ledgers cannot be frozen (the CLI refuses, a node REQNACKs a request
//   built without the SDK), three trustee signatures are needed, and a ledger the pool does not have is refused (this
//   pool runs no plugin); GET_FROZEN_LEDGERS proves that nothing is frozen (state proof + BLS multi-signature). The
//   freeze of a plugin ledger on a pool that runs one is plugin-ledger.test.ts.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import {
  ClientError,
  DidKey,
  appendTaaAcceptance,
  buildDisableAllTxnAuthorAgreementsRequest,
  buildGetFrozenLedgersRequest,
  buildGetTxnAuthorAgreementRequest,
  buildLedgersFreezeRequest,
  buildNymRequest,
  buildTaaAcceptance,
  buildTxnAuthorAgreementAmlRequest,
  buildTxnAuthorAgreementRequest,
  fetchTaa,
  multiSignRequest,
  nextReqId,
  signRequest,
  type Pool,
} from '@quire/client';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
import { askNode, quireOk, rawSignedRequest, runQuire } from '../support/client.js';
import { TestPool } from '../support/test-pool.js';
import { secs, waitFor } from '../support/wait.js';

type Json = Record<string, unknown>;
const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const sha256hex = (s: string): string => createHash('sha256').update(s).digest('hex');

describe('whole pool: TAA disable and ledgers freeze (SDK and quire CLI)', function () {
  // each scenario runs the CLI several times as a child process, which is slow on a loaded machine
  this.timeout(600_000);
  let pool: TestPool;
  let client: Pool;
  let fileStarted = 0;

  /** A CLI run as a child process: through tsx on a loaded machine it takes tens of seconds to start. */
  const CLI_TIMEOUT = { timeoutMs: 240_000 };
  const quire = (args: string[]): ReturnType<typeof runQuire> => runQuire(['--genesis', pool.genesisFile, ...args], CLI_TIMEOUT);
  const cli = (args: string[]): Promise<string> => quireOk(['--genesis', pool.genesisFile, ...args], CLI_TIMEOUT);
  const asTrustee = (args: string[]): Promise<string> => cli(['--seed', TRUSTEE_SEED, ...args]);

  async function write(req: Request, key: DidKey = trustee): Promise<Json> {
    return (await client.submitWrite(signRequest(req, key))).result;
  }

  async function refusedReason(req: Request): Promise<string> {
    let refused: unknown;
    await client.submitWrite(req).then(
      () => undefined,
      (e: unknown) => (refused = e),
    );
    expect(refused, 'the write was refused').to.be.instanceOf(ClientError);
    return String((refused as ClientError).data.reason);
  }

  /**
   * A read verified by state proof and multi-signature whose data satisfies `ok`, asked again while a node answers
   * without proof (it caught up the last batch and holds no multi-signature for it yet) or has not ordered the last
   * write yet.
   */
  async function verifiedRead(req: Request, ok: (data: unknown) => boolean, what: string): Promise<Json> {
    const r = await waitFor(
      what,
      async () => {
        const out = await client.submitRead({ ...req, reqId: nextReqId() });
        if (!out.verified) console.log(`      [read] type ${String(req.operation.type)} answered without proof by ${out.nodes.join(', ')}; asking again`);
        return out.verified && ok(out.result.data) ? out : undefined;
      },
      45_000,
      1000,
    );
    return r.result;
  }

  before(async function () {
    this.timeout(240_000);
    fileStarted = Date.now();
    pool = await TestPool.start({ name: 'ledger-admin', orderingTimeoutMs: 120_000, config: { consensus: { stateFreshnessUpdateIntervalSec: 20 } } });
    client = await pool.client();
    console.log(`      [timing] pool ordering ${secs(pool.startMs)} after spawn (${TestPool.binDescription()})`);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool?.dumpLogs(`failed: ${this.currentTest.fullTitle()}`);
  });

  after(async () => {
    await pool?.close();
    if (fileStarted > 0) console.log(`      [timing] ledger administration file: ${secs(Date.now() - fileStarted)} wall time`);
  });

  it('TXN_AUTHOR_AGREEMENT_DISABLE end to end: enforced, disabled by quire taa-disable, proven absent, enabled again by a new agreement', async () => {
    const version = `taa-${Date.now().toString(36)}`;
    const text = 'Quire agreement to be disabled.';
    const digest = sha256hex(version + text);
    await write(buildTxnAuthorAgreementAmlRequest({ submitter: trustee.did, version: `aml-${version}`, aml: { click_agreement: 'clicked' } }));
    await write(buildTxnAuthorAgreementRequest({ submitter: trustee.did, version, text, ratificationTs: Math.floor(Date.now() / 1000) - 60 }));
    await verifiedRead(buildGetTxnAuthorAgreementRequest({}), (d) => (d as Json | null)?.digest === digest, 'the agreement in force');
    expect(await refusedReason(signRequest(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), trustee))).to.contain(
      'Txn Author Agreement acceptance is required',
    );

    // a steward cannot disable it (1 TRUSTEE by default)
    const steward = await quire(['--seed', '000000000000000000000000Steward1', 'taa-disable']);
    expect(steward.code, steward.stderr).to.equal(1);
    expect(steward.stderr).to.contain('TRUSTEE');

    const out = await asTrustee(['taa-disable']);
    expect(out).to.contain('Committed: type 8');

    // GET_TAA: no latest agreement, proven; the agreement itself says it is retired
    const latest = await verifiedRead(buildGetTxnAuthorAgreementRequest({}), (d) => d === null, 'no latest agreement');
    expect(latest.data).to.equal(null);
    const byDigest = await verifiedRead(
      buildGetTxnAuthorAgreementRequest({ digest }),
      (d) => typeof (d as Json | null)?.retirement_ts === 'number',
      'the retired agreement',
    );
    expect(byDigest.data).to.deep.include({ version, text, digest });
    // the CLI prints the verified absence too (a read that finds nothing may end with exit status 1)
    const printedTaa = await quire(['get-taa']);
    expect(printedTaa.stdout).to.match(/not found/i);
    expect(printedTaa.stdout).to.contain('verified by state proof');

    // domain writes go through without acceptance; a second disable is refused
    await write(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }));
    const again = await quire(['--seed', TRUSTEE_SEED, 'taa-disable']);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('Transaction author agreement is already disabled.');

    // a new agreement enables acceptance again
    const v2 = `${version}-2`;
    const text2 = 'Quire agreement, second edition.';
    await write(buildTxnAuthorAgreementRequest({ submitter: trustee.did, version: v2, text: text2, ratificationTs: Math.floor(Date.now() / 1000) - 60 }));
    await verifiedRead(buildGetTxnAuthorAgreementRequest({}), (d) => (d as Json | null)?.version === v2, 'the new agreement');
    expect(await refusedReason(signRequest(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), trustee))).to.contain(
      'Txn Author Agreement acceptance is required',
    );
    const fetched = await fetchTaa(client);
    expect(fetched.taa?.version).to.equal(v2);
    const acceptance = buildTaaAcceptance({ text: fetched.taa!.text, version: fetched.taa!.version, mechanism: 'click_agreement', aml: fetched.aml! });
    await write(appendTaaAcceptance(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), acceptance));

    // leave the pool without an agreement for the next scenario's writes
    await asTrustee(['taa-disable']);
  });

  it('LEDGERS_FREEZE: base ledgers refused, three trustees needed, unknown ledgers refused; GET_FROZEN_LEDGERS proven empty', async () => {
    // independent of the scenario before: no agreement in force for this scenario's domain writes
    if ((await fetchTaa(client)).taa !== null) await write(buildDisableAllTxnAuthorAgreementsRequest({ submitter: trustee.did }));
    // two more trustees (the default rule needs three signatures)
    const trustees = [trustee, DidKey.random(), DidKey.random()];
    for (const t of trustees.slice(1)) await write(buildNymRequest({ submitter: trustee.did, dest: t.did, verkey: t.verkey, role: '0' }));

    // the CLI refuses base ledgers before sending anything
    const base = await quire(['--seed', TRUSTEE_SEED, 'ledgers-freeze', '--ledgers', '1']);
    expect(base.code).to.equal(1);
    expect(base.stderr).to.contain("(0, 1, 2, 3) ledgers can't be frozen");
    // a node refuses them too (REQNACK), for a request built without the SDK
    const nack = await askNode(pool.nodes[0]!, rawSignedRequest(TRUSTEE_SEED, { type: '9', ledgers_ids: [2] }, Date.now()));
    expect(nack.op).to.equal('REQNACK');
    expect(String(nack.reason)).to.contain("(0, 1, 2, 3) ledgers can't be frozen");

    // one trustee is not enough
    const single = await refusedReason(signRequest(buildLedgersFreezeRequest({ submitter: trustee.did, ledgersIds: [909] }), trustee));
    expect(single).to.contain('TRUSTEE');
    // three trustees (SDK multi-signature): the pool has no ledger 909
    let req = buildLedgersFreezeRequest({ submitter: trustee.did, ledgersIds: [909] });
    for (const t of trustees) req = multiSignRequest(req, t);
    expect(await refusedReason(req)).to.contain('One or more ledgers from [909] have never existed');
    // the same through the CLI with co-signer key files
    const files: string[] = [];
    for (const [i, t] of trustees.slice(1).entries()) {
      const f = join(pool.dir, `cosigner-${i}.json`);
      writeFileSync(f, stringifyJson({ seed: t.seedHex }), { mode: 0o600 });
      files.push(f);
    }
    const cliFreeze = await quire(['--seed', TRUSTEE_SEED, 'ledgers-freeze', '--ledgers', '909,910', ...files.flatMap((f) => ['--cosigner-key-file', f])]);
    expect(cliFreeze.code, cliFreeze.stderr).to.equal(1);
    expect(cliFreeze.stderr).to.contain('One or more ledgers from [909, 910] have never existed');

    // nothing is frozen, and that is proven
    const frozen = await verifiedRead(buildGetFrozenLedgersRequest({}), (d) => d === null, 'GET_FROZEN_LEDGERS');
    expect(frozen).to.include({ data: null, seqNo: null, type: '10' });
    const run = await quire(['--json', 'get-frozen-ledgers']);
    const printed = parseJson(run.stdout) as Json;
    expect(printed.data).to.equal(null);
    expect(printed.state_proof).to.be.an('object');
    // writes to the base ledgers go on
    await write(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }));
  });
});
