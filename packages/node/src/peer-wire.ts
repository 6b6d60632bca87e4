// The bytes of a consensus message on the peer wire (canonical MessagePack, formats.md 1.7), also
// the encoding of the PRE-PREPAREs the vote journal keeps on disk. Optional fields the core leaves
// undefined are omitted, not encoded.
import { encodeMsgpack } from '@quire/common';

export function encodePeerMessage(msg: object): Uint8Array {
  return encodeMsgpack(definedFields(msg));
}

/** A copy of `msg` without its undefined fields. */
export function definedFields<T extends object>(msg: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg)) if (v !== undefined) out[k] = v;
  return out as T;
}
