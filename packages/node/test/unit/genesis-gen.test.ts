import { expect } from 'chai';
import { LedgerId, Role, TxnType, b58encode, canonicalJson, sha256Hex } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { Ledger, loadGenesisEntries, openMemoryKvStore, parseGenesis } from '@quire/storage';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import {
  STANDARD_DOMAIN_GENESIS,
  TRUSTEE_SEED,
  poolGenesis,
  poolGenesisLine,
  standardDomainGenesis,
  standardPoolNodes,
  stewardSeed,
} from '../../src/genesis-gen.js';
import { PORTS } from './helpers.js';

describe('genesis generation', () => {
  it('writes the NODE line in exactly the shape of formats.md §11', () => {
    const [n1] = standardPoolNodes(PORTS);
    const expected =
      '{"reqSignature":{},"txn":{"data":{"data":{"alias":"Node1","blskey":"<K>","blskey_pop":"<P>","client_ip":"127.0.0.1","client_port":9702,"node_ip":"127.0.0.1","node_port":9701,"services":["VALIDATOR"]},"dest":"Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv"},"metadata":{"from":"Th7MpTaRZVRYnPiabds81Y"},"type":"0"},"txnMetadata":{"seqNo":1,"txnId":"fea82e10e894419fe2bea7d96296a6d46f50f93f9eeda954ec461b2ed2950b62"},"ver":"1"}';
    expect(poolGenesisLine(n1!, 1)).to.equal(expected.replace('<K>', n1!.keys.blskey).replace('<P>', n1!.keys.blskey_pop));
  });

  it('uses the standard stewards, dests and txnIds for Node2..4', () => {
    const nodes = standardPoolNodes(PORTS);
    const lines = poolGenesis(nodes)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { txn: { data: { dest: string }; metadata: { from: string } }; txnMetadata: { seqNo: number; txnId: string } });
    expect(lines.map((l) => l.txnMetadata.seqNo)).to.deep.equal([1, 2, 3, 4]);
    expect(lines.map((l) => l.txn.metadata.from)).to.deep.equal([
      'Th7MpTaRZVRYnPiabds81Y',
      'EbP4aYNeTHL6q385GuVpRV',
      '4cU41vWW82ArfxJxHkzXPG',
      'TWwCRQRZ2ZHMJFn9TzLp7W',
    ]);
    expect(lines.map((l) => l.txn.data.dest)).to.deep.equal([
      'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv',
      '8ECVSk179mjsjKRLWiQtssMLgp6EPhWXtaYyStWPSGAb',
      'DKVxG2fXXTU8yT5N7hGEbXB3dfdAnYv1JczDUHpmDxya',
      '4PS3EDQ3dW1tci1Bp6543CfuuebjFrg36kLAUcskGfaA',
    ]);
    expect(lines.slice(1).map((l) => l.txnMetadata.txnId)).to.deep.equal([
      '1ac8aece2a18ced660fef8694b61aac3af08ba875ce3026a160acbc3a3af35fc',
      '7e9f355dffa78ed24668f0e0e369fd8c224076571c51e2ea8be5f26479edebe4',
      'aa5e817d7cc626170eca175822029339a444eb0ee8f0bd20d3b0b76e566fb008',
    ]);
    expect(lines[0]!.txnMetadata.txnId).to.equal(sha256Hex('Node1'));
  });

  it('the standard domain genesis loads to the documented root', async () => {
    expect(STANDARD_DOMAIN_GENESIS).to.have.length(5);
    const kv = await openMemoryKvStore();
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    await loadGenesisEntries(ledger, 'domain', parseGenesis(standardDomainGenesis(), { file: 'domain', ledgerId: 1 }));
    expect(b58encode(ledger.root)).to.equal('DJLzEifT7n9DbiCHqQ5KWrWUPFBiZt349popapDfzo5p');
    await kv.close();
  });

  it('a larger pool: the standard lines, then the NYM of Steward5..N by Trustee1, and the whole loads', async () => {
    expect(standardDomainGenesis(4)).to.equal(standardDomainGenesis());
    const text = standardDomainGenesis(7);
    const lines = text.trimEnd().split('\n');
    expect(lines.slice(0, 5)).to.deep.equal([...STANDARD_DOMAIN_GENESIS]);
    expect(lines).to.have.length(8);
    const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED).did;
    lines.slice(5).forEach((line, k) => {
      const steward = Ed25519Signer.fromSeed(stewardSeed(5 + k));
      expect(line).to.equal(
        canonicalJson({
          reqSignature: {},
          txn: { data: { dest: steward.did, role: Role.STEWARD, verkey: steward.verkey }, metadata: { from: trustee }, type: TxnType.NYM },
          txnMetadata: { seqNo: 6 + k },
          ver: '1',
        }),
      );
    });
    const kv = await openMemoryKvStore();
    const ledger = await Ledger.open({ ledgerId: LedgerId.DOMAIN }, { kv });
    await loadGenesisEntries(ledger, 'domain', parseGenesis(text, { file: 'domain', ledgerId: LedgerId.DOMAIN }));
    expect(ledger.size).to.equal(8);
    await kv.close();
  });

  it('refuses bad input with GENESIS_GEN_INVALID', () => {
    const [n1, n2] = standardPoolNodes(PORTS.slice(0, 2));
    for (const f of [
      () => poolGenesis([]),
      () => poolGenesis([n1!, { ...n2!, alias: 'Node1' }]),
      () => poolGenesisLine({ ...n1!, nodePort: 0 }, 1),
      () => poolGenesisLine(n1!, 0),
      () => standardPoolNodes([]),
    ]) {
      expect(f).to.throw(NodeError).with.property('code', NodeErrorCode.GENESIS_GEN_INVALID);
    }
  });
});
