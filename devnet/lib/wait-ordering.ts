// "Is the pool ordering?": submit a real write (a NYM for a fresh DID, signed by Trustee1) to every
// node's client port, as a client does, and wait until f+1 nodes REPLY with the same committed txn.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { parseJson, signatureInput, stringifyJson } from '@quire/common';
import type { Request } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection } from '@quire/client';
import { maxFaulty } from './layout.js';
import { TRUSTEE_SEED } from './node-api.js';

export interface GenesisNode {
  alias: string;
  dest: string;
  clientIp: string;
  clientPort: number;
}

/** The validators of a pool genesis file. */
export function readPoolGenesis(file: string): GenesisNode[] {
  const out: GenesisNode[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const txn = parseJson(line) as { txn: { data: { dest: string; data: { alias: string; client_ip: string; client_port: number | string } } } };
    const d = txn.txn.data;
    out.push({ alias: d.data.alias, dest: d.dest, clientIp: d.data.client_ip, clientPort: Number(d.data.client_port) });
  }
  return out;
}

/** A NYM for a fresh DID, signed by Trustee1. */
export function probeRequest(): { request: Request; did: string } {
  const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED);
  const target = Ed25519Signer.fromSeed(new Uint8Array(randomBytes(32)));
  const request: Request = {
    identifier: trustee.did,
    reqId: Date.now() * 1000 + Math.floor(Math.random() * 1000),
    protocolVersion: 2,
    operation: { type: '1', dest: target.did, verkey: target.verkey },
  };
  request.signature = trustee.signBase58(signatureInput(request));
  return { request, did: target.did };
}

export interface OrderingResult {
  seqNo: number;
  did: string;
  /** Nodes whose REPLY agreed. */
  repliedBy: string[];
  elapsedMs: number;
}

export class OrderingTimeoutError extends Error {
  constructor(
    message: string,
    readonly perNode: Record<string, string>,
  ) {
    super(message);
    this.name = 'OrderingTimeoutError';
  }
}

interface NodeProbe {
  node: GenesisNode;
  connector: NodeConnection | undefined;
  connecting: boolean;
  note: string;
  lastSentAt: number;
}

const RESEND_MS = 5000;

/**
 * Submits the probe write to every node (connecting and re-sending as nodes come up) and resolves
 * when f+1 of them REPLY with the same seqNo. Rejects with OrderingTimeoutError after `timeoutMs`.
 */
export async function waitForOrdering(nodes: readonly GenesisNode[], opts: { timeoutMs: number; signal?: AbortSignal }): Promise<OrderingResult> {
  const started = Date.now();
  const need = maxFaulty(nodes.length) + 1;
  const { request, did } = probeRequest();
  const body = new TextEncoder().encode(stringifyJson(request));
  const replies = new Map<string, string>(); // alias -> seqNo:txn digest
  const probes: NodeProbe[] = nodes.map((node) => ({ node, connector: undefined, connecting: false, note: 'not reached yet', lastSentAt: 0 }));

  return new Promise<OrderingResult>((resolve, reject) => {
    let done = false;
    const finish = (err: Error | undefined, result?: OrderingResult): void => {
      if (done) return;
      done = true;
      clearInterval(tick);
      void Promise.allSettled(probes.map((p) => p.connector?.close())).then(() => (err ? reject(err) : resolve(result!)));
    };

    const onMessage = (p: NodeProbe, data: Uint8Array): void => {
      let msg: Record<string, unknown>;
      try {
        msg = parseJson(new TextDecoder().decode(data)) as Record<string, unknown>;
      } catch {
        p.note = 'sent an unreadable message';
        return;
      }
      if (msg.op === 'REQACK') p.note = 'acknowledged the write (REQACK)';
      else if (msg.op === 'REQNACK') p.note = `refused the write (REQNACK: ${String(msg.reason)})`;
      else if (msg.op === 'REJECT') {
        p.note = `rejected the write (REJECT: ${String(msg.reason)})`;
        finish(new OrderingTimeoutError(`the pool rejected the probe write: ${String(msg.reason)}`, notes()));
      } else if (msg.op === 'REPLY') {
        const result = msg.result as { txn?: { metadata?: { digest?: string } }; txnMetadata?: { seqNo?: number } } | undefined;
        const seqNo = result?.txnMetadata?.seqNo;
        if (typeof seqNo !== 'number') return;
        p.note = `replied (seqNo ${seqNo})`;
        replies.set(p.node.alias, `${seqNo}:${result?.txn?.metadata?.digest ?? ''}`);
        const counts = new Map<string, string[]>();
        for (const [alias, key] of replies) counts.set(key, [...(counts.get(key) ?? []), alias]);
        for (const [key, aliases] of counts) {
          if (aliases.length >= need) finish(undefined, { seqNo: Number(key.split(':')[0]), did, repliedBy: aliases.sort(), elapsedMs: Date.now() - started });
        }
      }
    };

    const send = (p: NodeProbe): void => {
      const c = p.connector;
      if (c === undefined || !c.connected) return;
      p.lastSentAt = Date.now();
      c.request(body, { timeoutMs: RESEND_MS }).then(
        (data) => onMessage(p, data),
        (err: Error) => {
          if (!done) p.note = `did not answer: ${err.message}`;
        },
      );
    };

    const poke = (p: NodeProbe): void => {
      if (done || replies.has(p.node.alias) || p.connecting) return;
      if (p.connector?.connected) {
        if (Date.now() - p.lastSentAt >= RESEND_MS) send(p); // duplicates are recognised by the node
        return;
      }
      p.connecting = true;
      NodeConnection.connect({ host: p.node.clientIp, port: p.node.clientPort, dest: p.node.dest, timeoutMs: 3000 }).then(
        (c) => {
          p.connecting = false;
          if (done) {
            void c.close();
            return;
          }
          p.connector = c;
          p.note = 'connected';
          c.on('push', (data) => onMessage(p, data));
          c.on('close', () => {
            if (!done) p.note = 'connection closed';
          });
          send(p);
        },
        (err: Error) => {
          p.connecting = false;
          p.note = `not reachable on ${p.node.clientIp}:${p.node.clientPort} (${err.message})`;
        },
      );
    };

    const notes = (): Record<string, string> => Object.fromEntries(probes.map((p) => [p.node.alias, p.note]));
    const tick = setInterval(() => {
      if (opts.signal?.aborted) {
        finish(new OrderingTimeoutError('stopped while waiting for the pool to order', notes()));
        return;
      }
      if (Date.now() - started > opts.timeoutMs) {
        finish(
          new OrderingTimeoutError(
            `the pool did not order a write within ${Math.round(opts.timeoutMs / 1000)} s (${replies.size} of the ${need} needed replies)`,
            notes(),
          ),
        );
        return;
      }
      for (const p of probes) poke(p);
    }, 500);
    for (const p of probes) poke(p);
  });
}
