// Plugin ledgers (plugin.ts): a LedgerPlugin registers a ledger id (>= 1000) and its write and read
// types with the handler interfaces of the built-in types. The registry refuses malformed plugins and
// clashes; the executor orders, commits, reads (with state proofs), serves to catch-up and freezes a
// plugin ledger like a base ledger.
import { b58encode } from '@quire/common';
import { AttributeStore, Ledger, SeqNoIndex, StateTrie, TimestampStore, openMemoryKvStore } from '@quire/storage';
import { expect } from 'chai';
import { RequestError, RequestErrorCode } from '../../src/errors.js';
import { RequestExecutor } from '../../src/executor/executor.js';
import type { RequestResult } from '../../src/executor/executor.js';
import type { ExecutorStores } from '../../src/executor/stores.js';
import { FROZEN_LEDGERS_KEY } from '../../src/freeze/frozen-ledgers.js';
import type { ReadHandler, WriteHandler } from '../../src/handler.js';
import { type LedgerPlugin, ledgerPluginProblem } from '../../src/plugin.js';
import { HandlerRegistry, createDefaultRegistry } from '../../src/registry.js';
import { decodeWrapped, encodeWrapped } from '../../src/state-keys.js';
import { pyType } from '../../src/validation/fields.js';
import { DOMAIN_GENESIS, PP_TIME, TRUSTEE, genesisTxns, newSigner, nymOp, signed } from './helpers/harness.js';
import { createHarness, read, staticRefuses, verifyRead } from './domain-helpers.js';

const KV = 1001;
const key = (k: string): string => `kv:${k}`;

const kvPut: WriteHandler = {
  kind: 'write',
  type: '20000',
  name: 'KV_PUT',
  validator: 'ClientKvPutOperation',
  ledgerId: KV,
  validateStatic(request) {
    for (const field of ['key', 'value'] as const) {
      const value = request.operation[field];
      if (typeof value !== 'string')
        throw new RequestError(RequestErrorCode.FIELD_TYPE, { validator: 'ClientKvPutOperation', field, value, expected: 'str', got: pyType(value) });
    }
  },
  validateDynamic(request, ctx) {
    if (ctx.idr.roleOf(request.author) !== '0') throw new RequestError(RequestErrorCode.AUTH_NOT_ALLOWED, { request: 'KV_PUT' });
  },
  updateState(txn, ctx) {
    const d = txn.txn.data;
    ctx.state(KV).set(key(String(d.key)), encodeWrapped(d.value, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};

const getKv: ReadHandler = {
  kind: 'read',
  type: '20001',
  name: 'GET_KV',
  validator: 'GetKvOperation',
  ledgerId: KV,
  validateStatic() {},
  async read(request, ctx) {
    const lookup = ctx.lookup(KV, key(String(request.operation.key)));
    if (lookup.value === undefined) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: KV, lookup } };
    const w = decodeWrapped(lookup.value, key(String(request.operation.key)));
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: KV, lookup } };
  },
};

const plugin: LedgerPlugin = { name: 'kv', ledgerId: KV, handlers: [kvPut, getKv] };

async function pluginStores(): Promise<ExecutorStores> {
  const kv = await openMemoryKvStore();
  return {
    kv,
    ledgers: {
      0: await Ledger.open({ ledgerId: 0 }, { kv }),
      1: await Ledger.open({ ledgerId: 1 }, { kv }),
      2: await Ledger.open({ ledgerId: 2 }, { kv }),
      [KV]: await Ledger.open({ ledgerId: KV }, { kv }),
    },
    states: {
      0: await StateTrie.open({ name: 'pool' }, { kv }),
      1: await StateTrie.open({ name: 'domain' }, { kv }),
      2: await StateTrie.open({ name: 'config' }, { kv }),
      [KV]: await StateTrie.open({ name: `ledger-${KV}` }, { kv }),
    },
    attributes: new AttributeStore(kv),
    timestamps: new TimestampStore(kv),
    seqNoIndex: new SeqNoIndex(kv),
  };
}

interface Node {
  executor: RequestExecutor;
  stores: ExecutorStores;
  order(ledgerId: number, requests: unknown[]): Promise<RequestResult[]>;
}

async function pluginNode(ledgerPlugin: LedgerPlugin = plugin): Promise<Node> {
  const stores = await pluginStores();
  const executor = new RequestExecutor({}, { stores, registry: createDefaultRegistry([ledgerPlugin]) });
  await executor.applyGenesis(1, genesisTxns(DOMAIN_GENESIS));
  let t = PP_TIME;
  return {
    executor,
    stores,
    async order(ledgerId, requests) {
      const r = executor.applyBatch(ledgerId, requests, t++);
      await executor.commit(r.batchId);
      return r.results;
    },
  };
}

const put = (k: string, v: string, by = TRUSTEE): Record<string, unknown> => signed(by, { type: '20000', key: k, value: v });
const codeOf = (r: RequestResult | undefined): string | undefined => (r?.valid === false ? r.code : undefined);

describe('plugin ledgers: registration', () => {
  it('a plugin registers its ledger and types; malformed plugins and clashes are refused', () => {
    const r = createDefaultRegistry([plugin]);
    expect(r.plugin(KV)).to.equal(plugin);
    // the write is registered guarded (synchronous-handler.ts), calling the plugin's handler
    expect(r.write('20000')).to.include({ type: '20000', name: 'KV_PUT', validator: 'ClientKvPutOperation', ledgerId: KV });
    expect(r.read('20001')).to.equal(getKv);
    expect(r.plugins().map((p) => p.ledgerId)).to.deep.equal([KV]);
    expect(createDefaultRegistry().plugins()).to.deep.equal([]);

    for (const ledgerId of [0, 3, 4, 999, 1000.5, -1001, 2 ** 31]) expect(ledgerPluginProblem({ ...plugin, ledgerId }), String(ledgerId)).to.match(/^ledgerId/);
    expect(ledgerPluginProblem({ ...plugin, ledgerId: 1000 })).to.match(/must write to ledger 1000/);
    expect(ledgerPluginProblem(null)).to.equal('not an object');
    expect(ledgerPluginProblem({ ...plugin, handlers: [] })).to.match(/^handlers/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...kvPut, ledgerId: 1 }] })).to.match(/must write to ledger 1001, not 1/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...getKv, ledgerId: 1 }] })).to.match(/must read ledger 1001/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...kvPut, kind: 'action' }] })).to.match(/kind/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...kvPut, type: 'KV' }] })).to.match(/type/);
    expect(ledgerPluginProblem({ ...plugin, name: '' })).to.match(/^name/);

    expect(() => createDefaultRegistry([{ ...plugin, handlers: [{ ...kvPut, type: '1' }] }])).to.throw(/type 1 is already registered \(NYM\)/);
    expect(() => createDefaultRegistry([plugin, { ...plugin, name: 'other', handlers: [{ ...kvPut, type: '30000' }] }])).to.throw(
      /ledger 1001 is already the ledger of kv/,
    );
    expect(() => createDefaultRegistry([plugin, { ...plugin, name: 'again', ledgerId: 1002, handlers: [{ ...kvPut, ledgerId: 1002 }] }])).to.throw(
      /type 20000 is already registered/,
    );
    // a failed registration leaves nothing behind
    const partial = new HandlerRegistry();
    expect(() => partial.registerPlugin({ ...plugin, handlers: [kvPut, { ...getKv, type: '20000' }] })).to.throw(/duplicate handler/);
    // every refusal of the registry is a coded RequestError
    try {
      createDefaultRegistry([{ ...plugin, handlers: [{ ...kvPut, type: '1' }] }]);
      expect.fail('registered a plugin type that clashes with NYM');
    } catch (e) {
      expect(e).to.be.instanceOf(RequestError);
      expect((e as RequestError).code).to.equal(RequestErrorCode.REGISTRY_INVALID);
    }
  });
});

describe('plugin ledgers: handlers whose checks return a promise', () => {
  it('a synchronous method given as an async function is refused at registration (REGISTRY_INVALID)', () => {
    const asyncCheck: WriteHandler = { ...kvPut, async validateDynamic() {} };
    expect(ledgerPluginProblem({ ...plugin, handlers: [asyncCheck] })).to.match(/^handlers\[0\]: validateDynamic: expected a synchronous function/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...kvPut, async updateState() {} }] })).to.match(/^handlers\[0\]: updateState/);
    expect(ledgerPluginProblem({ ...plugin, handlers: [{ ...kvPut, async *validateStatic() {} }] })).to.match(/^handlers\[0\]: validateStatic/);
    // a read's `read` is async by contract
    expect(ledgerPluginProblem(plugin)).to.equal(undefined);
    for (const make of [() => createDefaultRegistry([{ ...plugin, handlers: [asyncCheck] }]), () => new HandlerRegistry([asyncCheck])]) {
      try {
        make();
        expect.fail('registered an async validateDynamic');
      } catch (e) {
        expect(e).to.be.instanceOf(RequestError);
        expect((e as RequestError).code).to.equal(RequestErrorCode.REGISTRY_INVALID);
      }
    }
  });

  it('a validateDynamic that returns a promise refuses the request (HANDLER_NOT_SYNCHRONOUS), and its rejection ends nothing', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    // not an async function, so registration cannot tell: it returns a rejected promise on a steward's write
    const promising: WriteHandler = {
      ...kvPut,
      validateDynamic(request, ctx) {
        return (ctx.idr.roleOf(request.author) === '0'
          ? Promise.resolve()
          : Promise.reject(new RequestError(RequestErrorCode.AUTH_NOT_ALLOWED, { request: 'KV_PUT' }))) as unknown as void;
      },
    };
    const node = await pluginNode({ ...plugin, handlers: [promising, getKv] });
    try {
      const steward = newSigner();
      await node.order(1, [signed(TRUSTEE, nymOp(steward, '2'))]);
      const [refused, resolved] = await node.order(KV, [put('colour', 'red', steward), put('colour', 'blue')]);
      expect(codeOf(refused)).to.equal('HANDLER_NOT_SYNCHRONOUS');
      expect(codeOf(resolved)).to.equal('HANDLER_NOT_SYNCHRONOUS');
      expect(node.stores.ledgers[KV]!.size).to.equal(0);
      // the ledger still takes the base types
      expect((await node.order(1, [signed(TRUSTEE, nymOp(newSigner()))]))[0]?.valid).to.equal(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await node.stores.kv.close();
    }
  });
});

describe('plugin ledgers: ordering, reads, catch-up and freeze', () => {
  let node: Node;
  beforeEach(async () => {
    node = await pluginNode();
  });
  afterEach(() => node.stores.kv.close());

  it('orders a plugin write on its ledger only, updates its state, and reads it back with a state proof', async () => {
    expect(node.executor.stateLedgers).to.deep.equal([0, 1, 2, KV]);
    const [ok] = await node.order(KV, [put('colour', 'blue')]);
    expect(ok?.valid).to.equal(true);
    expect(node.stores.ledgers[KV]!.size).to.equal(1);
    expect(node.stores.states[KV]!.committedRoot).to.not.deep.equal(node.stores.states[1]!.committedRoot);
    // on another ledger's batch, and a base type on the plugin ledger: WRONG_LEDGER
    expect(codeOf((await node.order(1, [put('colour', 'red')]))[0])).to.equal('WRONG_LEDGER');
    expect(codeOf((await node.order(KV, [signed(TRUSTEE, nymOp(newSigner()))]))[0])).to.equal('WRONG_LEDGER');
    // the plugin's own authorization
    const steward = newSigner();
    await node.order(1, [signed(TRUSTEE, nymOp(steward, '2'))]);
    expect(codeOf((await node.order(KV, [put('colour', 'red', steward)]))[0])).to.equal('AUTH_NOT_ALLOWED');
    // a ledger the node does not have
    expect(() => node.executor.applyBatch(1002, [], PP_TIME))
      .to.throw(RequestError)
      .with.property('code', 'READ_INVALID_LEDGER');

    const out = await read(
      { executor: node.executor, stores: node.stores, order: async () => ({}) as never, close: async () => {} },
      { type: '20001', key: 'colour' },
    );
    expect(out.result).to.include({ data: 'blue', seqNo: 1 });
    expect(out.reply.stateRoot?.ledgerId).to.equal(KV);
    verifyRead(out, key('colour'), encodeWrapped('blue', 1, PP_TIME));
    // GET_TXN serves the plugin ledger with an audit path
    const txn = await read(
      { executor: node.executor, stores: node.stores, order: async () => ({}) as never, close: async () => {} },
      { type: '3', ledgerId: KV, data: 1 },
    );
    expect((txn.result.data as { ledgerSize: number }).ledgerSize).to.equal(1);
    expect((txn.result.data as { rootHash: string }).rootHash).to.equal(b58encode(node.stores.ledgers[KV]!.root));
  });

  it('GET_TXN names a plugin ledger id (1000 and above); a node without that ledger refuses it', async () => {
    const bare = await createHarness();
    try {
      staticRefuses(bare, { type: '3', ledgerId: 999, data: 1 }, 'READ_INVALID_LEDGER');
      staticRefuses(bare, { type: '3', ledgerId: 4, data: 1 }, 'READ_INVALID_LEDGER');
      let refused: unknown;
      await read(bare, { type: '3', ledgerId: KV, data: 1 }).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(RequestError).with.property('code', 'READ_INVALID_LEDGER');
      refused = undefined;
      await read(bare, { type: '3', ledgerId: 2 ** 31, data: 1 }).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(RequestError).with.property('code', 'READ_INVALID_LEDGER');
    } finally {
      await bare.close();
    }
  });

  it('serves the plugin ledger to catch-up: another node appends the txns and gets the same ledger and state roots', async () => {
    await node.order(KV, [put('a', '1'), put('b', '2')]);
    await node.order(KV, [put('a', '3')]);
    const txns = node.executor.catchupTxns(KV, 1, 3);
    expect(txns).to.have.length(3);
    const other = await pluginNode();
    try {
      const wb = other.stores.kv.batch();
      const done = other.executor.appendCaughtUp(KV, txns, wb, (root, size) => size === 3 && b58encode(root) === b58encode(node.stores.ledgers[KV]!.root));
      await wb.write();
      expect(done.size).to.equal(3);
      expect(b58encode(other.stores.states[KV]!.committedRoot)).to.equal(b58encode(node.stores.states[KV]!.committedRoot));
      expect(b58encode(other.stores.ledgers[KV]!.root)).to.equal(b58encode(node.stores.ledgers[KV]!.root));
      // and rebuilds its state from the ledger to the same root
      expect(b58encode(await other.executor.rebuildState(KV))).to.equal(b58encode(node.stores.states[KV]!.committedRoot));
    } finally {
      await other.stores.kv.close();
    }
  });

  it('LEDGERS_FREEZE records the plugin ledger with its root, state root and size; its writes are refused, the base ledgers still written', async () => {
    await node.order(KV, [put('colour', 'blue')]);
    const trustees = [TRUSTEE, newSigner(), newSigner()];
    for (const t of trustees.slice(1)) await node.order(1, [signed(TRUSTEE, nymOp(t, '0'))]);
    const root = b58encode(node.stores.ledgers[KV]!.root);
    const stateRoot = b58encode(node.stores.states[KV]!.committedRoot);
    const [frozen] = await node.order(2, [signed(trustees, { type: '9', ledgers_ids: [KV] })]);
    expect(frozen?.valid, codeOf(frozen)).to.equal(true);
    expect(decodeWrapped(node.stores.states[2]!.get(FROZEN_LEDGERS_KEY)!, FROZEN_LEDGERS_KEY).val).to.deep.equal({
      [String(KV)]: { ledger: root, state: stateRoot, seq_no: 1 },
    });
    const [refused] = await node.order(KV, [put('colour', 'green')]);
    expect(codeOf(refused)).to.equal('LEDGER_FROZEN');
    expect((refused as { reason: string }).reason).to.equal(`'20000' transaction is forbidden because of '${KV}' ledger is frozen`);
    expect(node.stores.ledgers[KV]!.size).to.equal(1);
    expect((await node.order(1, [signed(TRUSTEE, nymOp(newSigner()))]))[0]?.valid).to.equal(true);
    // the base ledgers still cannot be frozen
    const [base] = await node.order(2, [signed(trustees, { type: '9', ledgers_ids: [1] })]);
    expect(codeOf(base)).to.equal('FREEZE_BASE_LEDGER');
  });

  it('a plugin ledger that asks for TAA acceptance refuses writes without one while an agreement is in force; others refuse an acceptance', async () => {
    const stores = await pluginStores();
    try {
      const executor = new RequestExecutor({}, { stores, registry: createDefaultRegistry([{ ...plugin, taaAcceptanceRequired: true }]) });
      await executor.applyGenesis(1, genesisTxns(DOMAIN_GENESIS));
      const order = async (lid: number, reqs: unknown[], t: number): Promise<RequestResult | undefined> => {
        const r = executor.applyBatch(lid, reqs, t);
        await executor.commit(r.batchId);
        return r.results[0];
      };
      const t0 = PP_TIME;
      expect((await order(2, [signed(TRUSTEE, { type: '5', version: 'aml1', aml: { click: 'clicked' } })], t0))?.valid).to.equal(true);
      expect((await order(2, [signed(TRUSTEE, { type: '4', version: 'v1', text: 'agree', ratification_ts: t0 - 10 })], t0 + 1))?.valid).to.equal(true);
      expect(codeOf(await order(KV, [put('k', 'v')], t0 + 2))).to.equal('TAA_MISSING');
    } finally {
      await stores.kv.close();
    }
    // the plugin of the other tests needs none: an acceptance is not expected
    const taaAcceptance = { mechanism: 'click', taaDigest: 'a'.repeat(64), time: PP_TIME - (PP_TIME % 86400) };
    const withAcceptance = signed(TRUSTEE, { type: '20000', key: 'k', value: 'v' }, { taaAcceptance });
    expect(codeOf((await node.order(KV, [withAcceptance]))[0])).to.equal('TAA_NOT_EXPECTED');
  });
});
