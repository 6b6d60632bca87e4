// The client request path (requests.md §1, consensus.md §2, formats.md §5): parse losslessly,
// envelope + static validation + signatures through the request pipeline, REQACK / REQNACK with
// the exact shapes, reads answered locally from committed state with the stored BLS
// multi-signature attached, writes handed to consensus, and REPLY / REJECT pushed on the client's
// stream once its write is ordered and durable. Duplicates of ordered writes are answered from
// the ledger.
import { b58encode, isPlainObject, stringifyJson } from '@quire/common';
import type { RequestPipeline } from '@quire/requests';
import { RequestError, RequestErrorCode, wrapReason } from '@quire/requests';
import type { BlsStore, Ledger, SeqNoIndex, StateTrie, AttributeStore } from '@quire/storage';
import type { NodeLogger } from './logger.js';
import type { NodeMetrics } from './metrics.js';

/** How the path talks to a client connection (the ClientHost in production, a recorder in tests). */
export interface ClientChannel {
  /** answers the request (first and only RESPONSE) */
  respond(data: Uint8Array): boolean;
  /** a later message on the same session (REPLY / REJECT of an ordered write) */
  push(data: Uint8Array): boolean;
}

export interface ClientPathModules {
  pipeline: RequestPipeline;
  stores: {
    ledgers: Record<0 | 1 | 2 | 3, Ledger>;
    states: Record<0 | 1 | 2, StateTrie>;
    bls: BlsStore;
    seqNoIndex: SeqNoIndex;
    attributes: AttributeStore;
  };
  /** hands a statically valid write to consensus (consensus.md §2 steps 4-7) */
  submit(connId: string, request: Record<string, unknown>): void;
  /** applies a forced POOL_CONFIG / POOL_UPGRADE on receipt (requests.md §5.5) */
  onForced?(request: { type: string; operation: Readonly<Record<string, unknown>> }): void;
  /**
   * Carries out an authorized action (POOL_RESTART, VALIDATOR_INFO; requests.md §8): resolves with
   * the REPLY `data`, rejects with the REJECT reason. Without it actions are refused (REQNACK).
   */
  onAction?(request: { type: string; operation: Readonly<Record<string, unknown>>; identifier: string; reqId: number | bigint }): Promise<unknown>;
  /** wall clock in seconds */
  now(): number;
  logger: NodeLogger;
  metrics?: NodeMetrics | undefined;
}

interface Pending {
  channel: ClientChannel;
  identifier: string;
  reqId: number | bigint;
  /** the first answer (REQACK/REQNACK/REPLY) has been sent */
  answered: boolean;
  receivedAt: number;
}

const textDecoder = new TextDecoder('utf-8', { fatal: false });
const textEncoder = new TextEncoder();

export function encodeReply(msg: unknown): Uint8Array {
  return textEncoder.encode(stringifyJson(msg));
}

export class ClientPath {
  private readonly m: ClientPathModules;
  private readonly pending = new Map<string, Pending>();
  private writable = true;
  private nextConn = 1;
  private stopped = false;

  constructor(modules: ClientPathModules) {
    this.m = modules;
  }

  /** POOL_CONFIG `writes` (requests.md §1.5, §5.4). */
  setWritable(writable: boolean): void {
    this.writable = writable;
  }

  get isWritable(): boolean {
    return this.writable;
  }

  /** Stops accepting requests; writes already handed to consensus still get their REPLY. */
  stop(): void {
    this.stopped = true;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** One client message. Never throws. */
  async handle(data: Uint8Array, channel: ClientChannel): Promise<void> {
    if (this.stopped) return;
    const started = performance.now();
    try {
      const text = textDecoder.decode(data);
      const outcome = await this.m.pipeline.receive(text, { now: this.m.now(), writable: this.writable, fromClient: true });
      switch (outcome.kind) {
        case 'nack': {
          const r = outcome.request;
          const fields = r === null ? envelopeGuess(text) : { identifier: r.identifier ?? r.author, reqId: r.reqId };
          this.count('unknown', 'nack');
          channel.respond(encodeReply(nack(fields.identifier, fields.reqId, outcome.error)));
          return;
        }
        case 'read': {
          const result = { ...outcome.reply.result };
          this.attachMultiSig(result, outcome.reply.stateRoot, outcome.request.type, outcome.request.operation);
          channel.respond(encodeReply({ op: 'REPLY', result }));
          this.count('read', 'reply');
          this.m.metrics?.readLatency.observe((performance.now() - started) / 1000);
          return;
        }
        case 'action': {
          const r = outcome.request;
          const id = r.identifier ?? r.author;
          if (outcome.error !== null) {
            channel.respond(encodeReply({ op: 'REJECT', identifier: id, reqId: r.reqId, reason: wrapReason(outcome.error, r.identifier, r.reqId), code: outcome.error.replyCode }));
            this.count('action', 'reject');
            return;
          }
          const act = this.m.onAction;
          if (act === undefined) {
            channel.respond(encodeReply({ op: 'REQNACK', identifier: id, reqId: r.reqId, reason: `action ${r.type} is not available on this node` }));
            this.count('action', 'nack');
            return;
          }
          channel.respond(encodeReply({ op: 'REQACK', identifier: id, reqId: r.reqId }));
          try {
            const data = await act({ type: r.type, operation: r.operation, identifier: id, reqId: r.reqId });
            channel.push(encodeReply({ op: 'REPLY', result: { ...r.operation, identifier: id, reqId: r.reqId, data } }));
            this.count('action', 'reply');
          } catch (e) {
            channel.push(encodeReply({ op: 'REJECT', identifier: id, reqId: r.reqId, reason: e instanceof Error ? e.message : String(e), code: null }));
            this.count('action', 'reject');
          }
          return;
        }
        case 'write': {
          const r = outcome.request;
          if (outcome.forced) this.m.onForced?.({ type: r.type, operation: r.operation });
          const connId = `c${this.nextConn++}`;
          this.pending.set(connId, { channel, identifier: r.identifier ?? r.author, reqId: r.reqId, answered: false, receivedAt: started });
          this.m.submit(connId, r.request as unknown as Record<string, unknown>);
          return;
        }
      }
    } catch (e) {
      this.m.logger.warn({ err: e }, 'client request failed unexpectedly');
      const err = new RequestError(RequestErrorCode.INTERNAL, { problem: e instanceof Error ? e.message : String(e) });
      channel.respond(encodeReply(nack('', 0, err)));
    }
  }

  /** REQACK of a write accepted by consensus. */
  ack(connId: string): void {
    const p = this.pending.get(connId);
    if (p === undefined || p.answered) return;
    p.answered = true;
    p.channel.respond(encodeReply({ op: 'REQACK', identifier: p.identifier, reqId: p.reqId }));
    this.count('write', 'ack');
  }

  /** REQNACK from consensus (analysis failure, overload). */
  nackWrite(connId: string, reason: string): void {
    const p = this.pending.get(connId);
    if (p === undefined) return;
    this.pending.delete(connId);
    p.channel.respond(encodeReply({ op: 'REQNACK', identifier: p.identifier, reqId: p.reqId, reason }));
    this.count('write', 'nack');
  }

  /** The request was ordered before: REPLY from the ledger, or REQNACK when only the payload matches. */
  async replyFromLedger(connId: string, payloadDigest: string, digest: string): Promise<void> {
    const p = this.pending.get(connId);
    if (p === undefined) return;
    this.pending.delete(connId);
    const s = this.m.stores;
    const loc = s.seqNoIndex.getByPayloadDigestSync(payloadDigest);
    if (loc === undefined || s.seqNoIndex.getPayloadDigestSync(digest) !== payloadDigest) {
      const err = new RequestError(RequestErrorCode.DUPLICATE_DIFFERENT_SIGNATURES);
      p.channel.respond(encodeReply({ op: 'REQNACK', identifier: p.identifier, reqId: p.reqId, reason: wrapReason(err, p.identifier, p.reqId) }));
      this.count('write', 'nack');
      return;
    }
    const result = await this.writeResult(loc.ledgerId, loc.seqNo);
    p.channel.respond(encodeReply({ op: 'REPLY', result }));
    this.count('write', 'reply');
  }

  /** REPLY / REJECT for the client connections of an ordered batch (after its write is durable). */
  async ordered(ledgerId: number, replies: readonly { seqNo: number; connIds: readonly string[] }[], rejects: readonly { reason: string; connIds: readonly string[] }[]): Promise<void> {
    for (const r of replies) {
      const targets = r.connIds.map((c) => [c, this.pending.get(c)] as const).filter((x): x is readonly [string, Pending] => x[1] !== undefined);
      if (targets.length === 0) continue;
      const bytes = encodeReply({ op: 'REPLY', result: await this.writeResult(ledgerId, r.seqNo) });
      for (const [c, p] of targets) this.finish(c, p, bytes, 'reply');
    }
    for (const r of rejects) {
      for (const c of r.connIds) {
        const p = this.pending.get(c);
        if (p === undefined) continue;
        this.finish(c, p, encodeReply({ op: 'REJECT', identifier: p.identifier, reqId: p.reqId, reason: r.reason, code: rejectCode(r.reason) }), 'reject');
      }
    }
  }

  private finish(connId: string, p: Pending, bytes: Uint8Array, outcome: string): void {
    this.pending.delete(connId);
    if (p.answered) p.channel.push(bytes);
    else p.channel.respond(bytes);
    this.count('write', outcome);
    this.m.metrics?.writeLatency.observe((performance.now() - p.receivedAt) / 1000);
  }

  /** Drops the targets of a closed client session. */
  forgetChannel(channel: ClientChannel): void {
    for (const [c, p] of this.pending) if (p.channel === channel) this.pending.delete(c);
  }

  /** formats.md §5.2: the stored txn (ATTRIB raw/enc restored) + rootHash + auditPath at size seqNo. */
  async writeResult(ledgerId: number, seqNo: number): Promise<Record<string, unknown>> {
    const ledger = this.m.stores.ledgers[ledgerId as 0 | 1 | 2 | 3];
    const txn = (await ledger.get(seqNo)) as unknown as Record<string, unknown>;
    await this.restoreAttrib(txn);
    const rootHash = b58encode(await ledger.rootAt(seqNo));
    const auditPath = (await ledger.inclusionProof(seqNo, seqNo)).map((h) => b58encode(h));
    return { ...txn, rootHash, auditPath };
  }

  private async restoreAttrib(txn: Record<string, unknown>): Promise<void> {
    const body = txn.txn;
    if (!isPlainObject(body) || body.type !== '100' || !isPlainObject(body.data)) return;
    for (const k of ['raw', 'enc'] as const) {
      const h = body.data[k];
      if (typeof h !== 'string') continue;
      const original = await this.m.stores.attributes.get(h);
      if (original !== undefined) body.data[k] = original;
    }
  }

  /** formats.md §5.3, §9.4: the multi-signature stored for the state root that was read. */
  private attachMultiSig(result: Record<string, unknown>, stateRoot: { ledgerId: number; root: Uint8Array } | undefined, type: string, operation: Readonly<Record<string, unknown>>): void {
    const bls = this.m.stores.bls;
    if (stateRoot !== undefined) {
      const ms = bls.getSync(b58encode(stateRoot.root));
      const proof = result.state_proof;
      if (ms !== undefined && isPlainObject(proof)) result.state_proof = { ...proof, multi_signature: ms };
      return;
    }
    if (type === '3' && result.data !== null && result.data !== undefined) {
      const lid = typeof operation.ledgerId === 'number' ? operation.ledgerId : 1;
      if (lid !== 0 && lid !== 1 && lid !== 2) return;
      const root = this.m.stores.states[lid].committedRoot;
      const ms = bls.getSync(b58encode(root));
      if (ms !== undefined) result.state_proof = { multi_signature: ms };
    }
  }

  private count(kind: string, outcome: string): void {
    this.m.metrics?.requests.inc({ kind, outcome });
  }
}

function nack(identifier: string, reqId: number | bigint, error: RequestError): Record<string, unknown> {
  const m: Record<string, unknown> = { op: 'REQNACK', identifier, reqId, reason: wrapReason(error, identifier === '' ? null : identifier, reqId) };
  if (error.replyCode !== null) m.code = error.replyCode;
  return m;
}

/** identifier / reqId echoed in a REQNACK for a request that did not parse. */
function envelopeGuess(text: string): { identifier: string; reqId: number | bigint } {
  const id = /"identifier"\s*:\s*"([^"\\]{0,256})"/.exec(text)?.[1] ?? '';
  const rq = /"reqId"\s*:\s*(\d{1,20})/.exec(text)?.[1];
  let reqId: number | bigint = 0;
  if (rq !== undefined) {
    const n = BigInt(rq);
    reqId = n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }
  return { identifier: id, reqId };
}

/** TAA rejections carry their code (formats.md §5.4): `..., <code>)` at the end of the wrapped reason. */
function rejectCode(reason: string): number | null {
  const m = /, (20[0-7])\)$/.exec(reason);
  return m === null ? null : Number(m[1]);
}
