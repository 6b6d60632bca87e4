import { expect } from 'chai';
import { TxnType, requestToTxn, signatureInput, signingSerialization, b58decode } from '@quire/common';
import { Ed25519Signer, ed25519Verify } from '@quire/crypto';
import { nodeUpgradeHandler } from '@quire/requests';
import { ManualClock, UpgradeErrorCode, buildNodeUpgradeRequest, nodeUpgradeSubmitter, verifyNodeUpgradeSignature } from '../../src/upgrade/index.js';
import type { Request } from '@quire/common';

const node1 = Ed25519Signer.fromSeed('000000000000000000000000000Node1');

describe('upgrade: NODE_UPGRADE request (requests.md 5.3, formats.md 4.5)', () => {
  it('is authored and signed by the node key, with the inner signature over SER(data)', () => {
    const req = buildNodeUpgradeRequest(node1, { action: 'in_progress', version: '1.2.3' }, 42);
    expect(req.identifier).to.equal('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv');
    expect(req.operation.type).to.equal(TxnType.NODE_UPGRADE);
    expect(req.operation.data).to.deep.equal({ action: 'in_progress', version: '1.2.3' });
    expect(signingSerialization(req.operation.data)).to.equal('action:in_progress|version:1.2.3');
    expect(ed25519Verify(node1.publicKey, signatureInput(req), b58decode(req.signature!))).to.equal(true);
    expect(verifyNodeUpgradeSignature(req.operation, node1.fullVerkey)).to.equal(true);
    expect(verifyNodeUpgradeSignature({ ...req.operation, data: { action: 'complete', version: '1.2.3' } }, node1.fullVerkey)).to.equal(false);
    expect(verifyNodeUpgradeSignature(req.operation, Ed25519Signer.fromSeed('000000000000000000000000000Node2').fullVerkey)).to.equal(false);
    expect(verifyNodeUpgradeSignature({ data: {}, signature: 'x' }, 'not-a-key')).to.equal(false);
  });

  it('passes the NODE_UPGRADE static validation and is stored in the Indy layout', () => {
    const req = buildNodeUpgradeRequest(node1, { action: 'complete', version: '1.2.3' }, 7);
    nodeUpgradeHandler.validateStatic({ ...req, author: req.identifier } as never);
    const txn = requestToTxn(req);
    expect(txn.txn.type).to.equal('110');
    expect(Object.keys(txn.txn.data).sort()).to.deep.equal(['data', 'signature']);
    expect(txn.txn.data.data).to.deep.equal({ action: 'complete', version: '1.2.3' });
    expect(txn.txn.metadata.from).to.equal(node1.fullVerkey);
  });

  it('refuses a bad action or version with a stable code', () => {
    expect(() => buildNodeUpgradeRequest(node1, { action: 'done' as never, version: '1.0' }, 1))
      .to.throw()
      .with.property('code', UpgradeErrorCode.NODE_UPGRADE_ACTION_INVALID);
    expect(() => buildNodeUpgradeRequest(node1, { action: 'fail', version: '1.0 beta' }, 1))
      .to.throw()
      .with.property('code', UpgradeErrorCode.VERSION_INVALID);
    expect(() => buildNodeUpgradeRequest(node1, { action: 'fail', version: 'x'.repeat(129) }, 1))
      .to.throw()
      .with.property('code', UpgradeErrorCode.VERSION_INVALID);
  });

  it('the submitter hands signed requests with increasing reqIds to the node', async () => {
    const sent: Request[] = [];
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const submit = nodeUpgradeSubmitter(node1, async (r) => void sent.push(r), clock);
    await submit({ action: 'in_progress', version: '2.0' });
    await submit({ action: 'fail', version: '2.0' });
    expect(sent[0]!.reqId).to.equal(Date.UTC(2030, 0, 1) * 1000);
    expect(Number(sent[1]!.reqId)).to.be.greaterThan(Number(sent[0]!.reqId));
    expect(sent.map((r) => (r.operation.data as { action: string }).action)).to.deep.equal(['in_progress', 'fail']);
  });
});
