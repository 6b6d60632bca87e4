// What every route shares: the pretty-format switch, the verification header and the reply writers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadOutcome } from '@quire/client';
import { jsonText, replyText } from './json.js';

/** How the body was verified: `proof` (state proof + BLS multi-signature of n-f validators), `consensus` (f+1 matching
 * replies), or `none` (local information such as the genesis, health, or an error). */
export const VERIFIED_HEADER = 'x-quire-verified';
/** The validators whose answer the body carries. */
export const NODES_HEADER = 'x-quire-nodes';
export type Verified = 'proof' | 'consensus' | 'none';

/** `?fmt` (any value, as `?fmt=pretty`) asks for indented JSON; `?raw` forces compact JSON. */
export function wantsPretty(req: FastifyRequest): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  return q !== undefined && q !== null && Object.hasOwn(q, 'fmt') && !Object.hasOwn(q, 'raw');
}

export function sendJson(reply: FastifyReply, status: number, text: string, verified: Verified = 'none'): FastifyReply {
  return reply.code(status).header(VERIFIED_HEADER, verified).type('application/json').send(text);
}

/** A verified read as indy-vdr-proxy returns it: the ledger's reply `{op: 'REPLY', result}`. */
export function sendRead(req: FastifyRequest, reply: FastifyReply, out: ReadOutcome): FastifyReply {
  reply.header(NODES_HEADER, out.nodes.join(','));
  return sendJson(reply, 200, replyText(out.result, wantsPretty(req)), out.verified ? 'proof' : 'consensus');
}

export function sendValue(req: FastifyRequest, reply: FastifyReply, value: unknown, verified: Verified, status = 200): FastifyReply {
  return sendJson(reply, status, jsonText(value, wantsPretty(req)), verified);
}
