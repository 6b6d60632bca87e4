// The four validators' client hosts of client.bench.ts's write path, in a worker thread so that the main thread's CPU
// is the SDK's alone: @quire/network's ClientHost (the node side of /quire/client/1.0.0) with each node's seed, answering
// every write as a node does, a REQACK response then a REPLY push of the committed NYM txn (the same bytes from every
// node, as nodes that agree send them), and a write whose reqId is at least REFUSED_FROM as an overloaded pool does,
// a REQNACK "pool overloaded" response from every node (REFUSED_FROM from the parent's workerData). Posts the hosts' ports to the parent, closes on any message
// from it.
import { parentPort, workerData } from 'node:worker_threads';
import { POOL_OVERLOADED_REASON, isPlainObject, parseJson, stringifyJson } from '@quire/common';
import type { ClientHost } from '@quire/network';
import { benchClientHost } from './bench-client-host.js';

const enc = new TextEncoder();
const port = parentPort;
if (port === null) throw new Error('client-write-hosts.ts runs as a worker thread');

/** Audit path of a ledger of about 100,000 txns: 17 hashes, as a node's REPLY carries. */
const AUDIT_PATH = Array.from({ length: 17 }, (_, i) => `${'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPK'.slice(0, 43 - String(i).length)}${i}a`);
let seqNo = 100_000;
/** Writes with a reqId from here on are refused by every node (REQNACK "pool overloaded"): client.bench.ts's workerData. */
const REFUSED_FROM = Number((workerData as { refusedFrom?: number } | null)?.refusedFrom ?? Number.POSITIVE_INFINITY);

const hosts: ClientHost[] = [];
for (let i = 0; i < 4; i++) {
  const h = await benchClientHost(i + 1);
  h.on('request', (clientId, bytes, respond, info) => {
    const req = parseJson(bytes);
    if (!isPlainObject(req) || !isPlainObject(req.operation)) return void respond(enc.encode(stringifyJson({ op: 'REQNACK', reason: 'not a request' })));
    if ((typeof req.reqId === 'number' || typeof req.reqId === 'bigint') && req.reqId >= REFUSED_FROM)
      return void respond(enc.encode(stringifyJson({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON })));
    respond(enc.encode(stringifyJson({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId })));
    const reply = replies.get(`${String(req.identifier)}|${String(req.reqId)}`) ?? replyTo(req);
    h.push(clientId, reply.bytes, info.requestId);
    if (++reply.sent === 4) replies.delete(`${String(req.identifier)}|${String(req.reqId)}`);
  });
  hosts.push(h);
}

/** The REPLY of a write, made once and sent by the four hosts */
const replies = new Map<string, { bytes: Uint8Array; sent: number }>();
function replyTo(req: Record<string, unknown>): { bytes: Uint8Array; sent: number } {
  const op = req.operation as Record<string, unknown>;
  const n = ++seqNo;
  const result = {
    auditPath: AUDIT_PATH,
    reqSignature: { type: 'ED25519', values: [{ from: req.identifier, value: req.signature }] },
    rootHash: 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1',
    txn: {
      data: { dest: op.dest, verkey: op.verkey },
      metadata: { digest: 'a'.repeat(64), from: req.identifier, payloadDigest: 'b'.repeat(64), reqId: req.reqId },
      protocolVersion: 2,
      type: op.type,
    },
    txnMetadata: { seqNo: n, txnId: 'c'.repeat(64), txnTime: 1_700_000_000 + Math.floor(n / 500) },
    ver: '1',
  };
  const r = { bytes: enc.encode(stringifyJson({ op: 'REPLY', result })), sent: 0 };
  replies.set(`${String(req.identifier)}|${String(req.reqId)}`, r);
  return r;
}

port.once('message', () => {
  void Promise.all(hosts.map((h) => h.close())).then(() => port.close());
});
port.postMessage(hosts.map((h) => h.port));
