// The messages of one write parsed once (ExchangeOptions.parsed): nodes sending equal bytes get the message parsed from
// the first of them, a node sending other bytes gets its own parse (a different txn is never taken for the agreed
// one), malformed bytes stay MALFORMED_REPLY, and reqIds above 2^53 stay exact.
import { expect } from 'chai';
import { stringifyJson } from '@quire/common';
import { ClientErrorCode } from '../../src/index.js';
import { ParsedMessages, exchange, type NodeAnswer } from '../../src/pool/exchange.js';
import type { ConnectionMessage, NodeConnection } from '../../src/transport/node-connection.js';
import { WriteQuorum } from '../../src/pool/write-quorum.js';

const enc = new TextEncoder();

/** A connection named `alias` that answers a request with `frames` (REQACK, REPLY...) as its node sends them. */
function answering(alias: string, frames: Uint8Array[]): NodeConnection {
  const conn = {
    alias,
    // no session ready to send on at once: the request goes through request()
    sendNow: () => undefined,
    request(_payload: Uint8Array, listener: (m: ConnectionMessage) => void) {
      queueMicrotask(() => {
        for (const payload of frames) listener({ kind: 'push', payload: payload.slice() });
      });
      return Promise.resolve({ id: 1, release: () => undefined });
    },
  };
  return conn as unknown as NodeConnection;
}

const reqId = 1_700_000_000_123_456_789n;
const ack = enc.encode(stringifyJson({ op: 'REQACK', identifier: 'V4SGRU86Z58d6TV7PBUe6f', reqId }));
const txn = (seqNo: number): Record<string, unknown> => ({ txn: { metadata: { reqId } }, txnMetadata: { seqNo }, rootHash: 'r' });
const reply = (seqNo: number): Uint8Array => enc.encode(stringifyJson({ op: 'REPLY', result: txn(seqNo) }));
const payload = new Uint8Array([123, 125]);

type Reply = Extract<NodeAnswer, { kind: 'reply' }>;

describe('exchange: the messages of a request parsed once (ParsedMessages)', () => {
  it('equal bytes from several nodes: one parsed message, each acknowledgement still seen; the write settles at f+1', async () => {
    const parsed = new ParsedMessages();
    const acks: string[] = [];
    const answers = await Promise.all(
      ['Node1', 'Node2', 'Node3'].map((n) =>
        exchange(answering(n, [ack, reply(7)]), payload, undefined, undefined, { timeoutMs: 5_000, parsed, onAck: (node) => acks.push(node) }),
      ),
    );
    expect(acks).to.have.members(['Node1', 'Node2', 'Node3']);
    const [a, b, c] = answers as Reply[];
    expect(a.kind).to.equal('reply');
    expect(b.message).to.equal(a.message);
    expect(c.message).to.equal(a.message);
    expect(a.node).to.equal('Node1');
    expect(b.node).to.equal('Node2');
    expect(((a.message.result as Record<string, unknown>).txn as { metadata: { reqId: unknown } }).metadata.reqId).to.equal(reqId);
    const q = new WriteQuorum(4, 1);
    q.add(a);
    expect(q.add(b)).to.deep.include({ kind: 'committed', nodes: ['Node1', 'Node2'] });
  });

  it('a node sending other bytes is parsed on its own: a different txn is never taken for the agreed one', async () => {
    const parsed = new ParsedMessages();
    const first = (await exchange(answering('Node1', [ack, reply(7)]), payload, undefined, undefined, { timeoutMs: 5_000, parsed })) as Reply;
    const other = (await exchange(answering('Node2', [ack, reply(8)]), payload, undefined, undefined, { timeoutMs: 5_000, parsed })) as Reply;
    const same = (await exchange(answering('Node3', [ack, reply(7)]), payload, undefined, undefined, { timeoutMs: 5_000, parsed })) as Reply;
    expect(other.message).to.not.equal(first.message);
    expect(other.message.result).to.deep.equal(txn(8));
    const q = new WriteQuorum(4, 1);
    q.add(first);
    expect(q.add(other)).to.equal(undefined);
    expect(q.add(same)).to.deep.include({ kind: 'committed', nodes: ['Node1', 'Node3'] });
  });

  it('bytes that do not parse are MALFORMED_REPLY for every node that sends them, never remembered', async () => {
    const parsed = new ParsedMessages();
    const bad = enc.encode('{"op":"REPLY","result":');
    for (const n of ['Node1', 'Node2']) {
      const a = await exchange(answering(n, [ack, bad]), payload, undefined, undefined, { timeoutMs: 5_000, parsed });
      expect(a.kind).to.equal('error');
      expect((a as Extract<NodeAnswer, { kind: 'error' }>).error.code).to.equal(ClientErrorCode.MALFORMED_REPLY);
    }
    expect(parsed.get(bad)).to.equal(undefined);
  });
});
