// TXN_AUTHOR_AGREEMENT_DISABLE, LEDGERS_FREEZE and GET_FROZEN_LEDGERS in the SDK (builders), the light-client
// verifier (GET_FROZEN_LEDGERS by state proof) and the quire CLI (taa-disable, ledgers-freeze, get-frozen-ledgers).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode, parseJson, signatureInput, stringifyJson } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { encodeWrapped } from '@quire/requests';
import { main } from '../../src/cli/main.js';
import {
  ClientErrorCode,
  DidKey,
  buildDisableAllTxnAuthorAgreementsRequest,
  buildGetFrozenLedgersRequest,
  buildLedgersFreezeRequest,
  verifyReadReply,
} from '../../src/index.js';
import { codeOf, poolLedger, stateProof, stateWith } from './fixtures.js';

const TRUSTEE = DidKey.fromSeed('000000000000000000000000Trustee1');
const TS = 1_700_000_000;
const NOW = TS + 10;
const pool = poolLedger.blsKeys();
const KEY = '4:FROZEN_LEDGERS';

async function runCli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('ledger administration requests (TAA disable, ledgers freeze)', () => {
  describe('builders', () => {
    it('TXN_AUTHOR_AGREEMENT_DISABLE: type 8, no fields, a write (author required)', () => {
      const r = buildDisableAllTxnAuthorAgreementsRequest({ submitter: TRUSTEE.did, reqId: 5 });
      expect(r).to.deep.equal({ identifier: TRUSTEE.did, reqId: 5, protocolVersion: 2, operation: { type: '8' } });
      expect(codeOf(() => buildDisableAllTxnAuthorAgreementsRequest({}))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    });

    it('LEDGERS_FREEZE: type 9 with ledgers_ids; base ledgers and non-integers refused', () => {
      const r = buildLedgersFreezeRequest({ submitter: TRUSTEE.did, ledgersIds: [909, 910], reqId: 6 });
      expect(r.operation).to.deep.equal({ type: '9', ledgers_ids: [909, 910] });
      for (const bad of [[0], [909, 3], [-1], [1.5], ['909']] as unknown[][]) {
        expect(
          codeOf(() => buildLedgersFreezeRequest({ submitter: TRUSTEE.did, ledgersIds: bad as number[] })),
          stringifyJson(bad),
        ).to.equal(ClientErrorCode.INVALID_ARGUMENT);
      }
      expect(codeOf(() => buildLedgersFreezeRequest({ submitter: TRUSTEE.did, ledgersIds: 909 as unknown as number[] }))).to.equal(
        ClientErrorCode.INVALID_ARGUMENT,
      );
    });

    it('GET_FROZEN_LEDGERS: type 10, a read with the default identifier', () => {
      const r = buildGetFrozenLedgersRequest({ reqId: 7 });
      expect(r).to.deep.equal({ identifier: 'LibindyDid111111111111', reqId: 7, protocolVersion: 2, operation: { type: '10' } });
    });
  });

  describe('GET_FROZEN_LEDGERS verification', () => {
    const frozen = { '909': { ledger: 'GKot5hBsd81kMupNCXHaqbhv3huEbxAFMLnpcX2hniwn', state: 'DfNLmH4DAHTKv63YPFJzuRdeEtVwF5RtVnvKYHd8iLEA', seq_no: 12 } };

    async function fixture(record: boolean): Promise<{ request: ReturnType<typeof buildGetFrozenLedgersRequest>; result: Record<string, unknown> }> {
      const trie = await stateWith(
        record
          ? [
              [KEY, encodeWrapped(frozen, 31, TS)],
              ['2:latest', new TextEncoder().encode('x')],
            ]
          : [['2:latest', new TextEncoder().encode('x')]],
        'config',
      );
      const request = buildGetFrozenLedgersRequest({ reqId: 9 });
      const result = {
        ...request.operation,
        identifier: request.identifier,
        reqId: request.reqId,
        data: record ? frozen : null,
        seqNo: record ? 31 : null,
        txnTime: record ? TS : null,
        state_proof: stateProof(trie, KEY, 2, TS),
      };
      return { request, result: parseJson(stringifyJson(result)) as Record<string, unknown> };
    }
    const verify = (request: ReturnType<typeof buildGetFrozenLedgersRequest>, result: Record<string, unknown>) =>
      verifyReadReply({ reply: { op: 'REPLY', result }, request, pool, now: NOW });

    it('accepts the record and its absence, each proven', async () => {
      const present = await fixture(true);
      expect(verify(present.request, present.result).type).to.equal('10');
      const absent = await fixture(false);
      expect(verify(absent.request, absent.result).type).to.equal('10');
    });

    it('refuses a tampered record, a hidden record, a claimed record that is absent, and data that is not an object', async () => {
      const { request, result } = await fixture(true);
      const tampered = { ...result, data: { '909': { ...frozen['909'], seq_no: 13 } } };
      expect(codeOf(() => verify(request, tampered))).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
      expect(codeOf(() => verify(request, { ...result, seqNo: 30 }))).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
      expect(codeOf(() => verify(request, { ...result, data: null, seqNo: null, txnTime: null }))).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
      const absent = await fixture(false);
      expect(codeOf(() => verify(absent.request, { ...absent.result, data: frozen, seqNo: 31, txnTime: TS }))).to.equal(ClientErrorCode.PROOF_VALUE_MISMATCH);
      expect(codeOf(() => verify(request, { ...result, data: [1] }))).to.equal(ClientErrorCode.REPLY_MALFORMED);
      expect(codeOf(() => verify(request, { ...result, data: 'text' }))).to.equal(ClientErrorCode.REPLY_MALFORMED);
      const { state_proof: _sp, ...noProof } = result;
      expect(codeOf(() => verify(request, noProof))).to.equal(ClientErrorCode.NO_PROOF);
    });
  });

  describe('CLI', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-admin-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const seeds = ['000000000000000000000000Trustee1', '000000000000000000000000Trustee2', '000000000000000000000000Trustee3'];

    it('taa-disable --dry-run prints the signed type-8 request', async () => {
      const r = await runCli(['--seed', seeds[0]!, '--dry-run', 'taa-disable']);
      expect(r.code, r.err.join('\n')).to.equal(0);
      const req = parseJson(r.out[0]!) as { operation: unknown; signature: string };
      expect(req.operation).to.deep.equal({ type: '8' });
      expect(ed25519Verify(TRUSTEE.publicKey, signatureInput(req), b58decode(req.signature))).to.equal(true);
    });

    it('ledgers-freeze signs in the multi-signature form with the key and every co-signer', async () => {
      const files = seeds.slice(1).map((seed, i) => {
        const f = join(dir, `cosigner${i}.json`);
        writeFileSync(f, stringifyJson({ seed }));
        return f;
      });
      const r = await runCli([
        '--seed',
        seeds[0]!,
        '--dry-run',
        'ledgers-freeze',
        '--ledgers',
        '909,910',
        '--cosigner-key-file',
        files[0]!,
        '--cosigner-key-file',
        files[1]!,
      ]);
      expect(r.code, r.err.join('\n')).to.equal(0);
      const req = parseJson(r.out[0]!) as { identifier: string; operation: unknown; signatures: Record<string, string>; signature?: string };
      expect(req.operation).to.deep.equal({ type: '9', ledgers_ids: [909, 910] });
      expect(req.identifier).to.equal(TRUSTEE.did);
      expect(req.signature).to.equal(undefined);
      const keys = seeds.map((s) => DidKey.fromSeed(s));
      expect(Object.keys(req.signatures).sort()).to.deep.equal(keys.map((k) => k.did).sort());
      for (const k of keys) expect(ed25519Verify(k.publicKey, signatureInput(req), b58decode(req.signatures[k.did]!)), k.did).to.equal(true);
    });

    it('ledgers-freeze refuses base ledgers and bad lists with a one-line reason and exit 1', async () => {
      for (const ledgers of ['1', '909,0', 'x', '', '-5']) {
        const r = await runCli(['--seed', seeds[0]!, '--dry-run', 'ledgers-freeze', '--ledgers', ledgers]);
        expect(r.code, ledgers).to.equal(1);
        expect(r.err.join('\n'), ledgers).to.match(/--ledgers|error/);
      }
    });

    it('the commands are listed in the help', async () => {
      const r = await runCli(['--help']);
      const help = r.out.join('\n');
      for (const c of ['taa-disable', 'ledgers-freeze', 'get-frozen-ledgers']) expect(help).to.contain(c);
    });
  });
});
