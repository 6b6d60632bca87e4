// The bytes of a consensus message on the peer wire (canonical MessagePack, formats.md 1.7), also
// the encoding of the PRE-PREPAREs the vote journal keeps on disk. Optional fields the core leaves
// undefined are omitted, not encoded. PeerMessageDecoder decodes the messages received, each distinct
// PROPAGATE encoding once.
import { BoundedFifo, decodeMsgpack, encodeMsgpack } from '@quire/common';

export function encodePeerMessage(msg: object): Uint8Array {
  return encodeMsgpack(definedFields(msg));
}

/** A copy of `msg` without its undefined fields. */
export function definedFields<T extends object>(msg: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** The first bytes of a PROPAGATE in canonical MessagePack: a map of 3 whose first key is "op", of value "PROPAGATE". */
const PROPAGATE_HEAD = Uint8Array.from([0x83, 0xa2, 0x6f, 0x70, 0xa9, 0x50, 0x52, 0x4f, 0x50, 0x41, 0x47, 0x41, 0x54, 0x45]);

/** Buffer's latin1 decoding of a byte range, callable on any Uint8Array (a string of one char per byte, a map key). */
export const latin1Slice = (Buffer.prototype as unknown as { latin1Slice(this: Uint8Array, start: number, end: number): string }).latin1Slice;

export interface PeerMessageDecoderOptions {
  /** decoded PROPAGATEs kept (default 4,096) */
  maxEntries: number;
  /** bytes of the encodings kept, all together (default 4 MiB); a PROPAGATE longer than a sixteenth of it is not kept */
  maxBytes: number;
}

export const defaultPeerMessageDecoderOptions: PeerMessageDecoderOptions = { maxEntries: 4096, maxBytes: 4 * 1024 * 1024 };

/**
 * Decodes the peer wire's messages (decodeMsgpack), each distinct PROPAGATE encoding once. A request reaches a node
 * in a PROPAGATE from every other validator, and the validators encode the same request to the same bytes (canonical
 * MessagePack), so two of every three PROPAGATEs a node of four receives repeat bytes it has just decoded: those get
 * the value decoded the first time (the same object: decoded messages are never modified, and equal bytes decode to
 * equal values). Other messages, and PROPAGATEs in another encoding, are decoded every time. The encodings kept are
 * bounded in count and in bytes (the oldest go first); bytes that do not decode throw, as decodeMsgpack does, and are
 * not kept.
 */
export class PeerMessageDecoder {
  private readonly opts: PeerMessageDecoderOptions;
  private readonly kept: BoundedFifo<string, unknown>;
  private keptBytes = 0;
  /** PROPAGATEs answered from the kept values */
  hits = 0;

  constructor(options: Partial<PeerMessageDecoderOptions> = {}) {
    this.opts = { ...defaultPeerMessageDecoderOptions, ...options };
    this.kept = new BoundedFifo(this.opts.maxEntries);
  }

  /** How many PROPAGATE encodings are kept, and their bytes. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.kept.size, bytes: this.keptBytes };
  }

  decode(data: Uint8Array): unknown {
    // a CATCHUP_REP's txns keep the bytes they came in, which the ledger hashes and stores (takeDecodedEncoding)
    if (isCatchupRepEncoding(data)) return decodeMsgpack(data, { keepMapsAtDepth: 2 });
    if (!isPropagateEncoding(data) || data.length * 16 > this.opts.maxBytes) return decodeMsgpack(data);
    const key = latin1Slice.call(data, 0, data.length);
    const known = this.kept.get(key);
    if (known !== undefined) {
      this.hits++;
      return known;
    }
    const value = decodeMsgpack(data);
    // the oldest go until the new one fits in count and bytes (it fits alone)
    while (this.kept.size >= this.opts.maxEntries || this.keptBytes + data.length > this.opts.maxBytes) {
      const oldest = this.kept.shift();
      if (oldest === undefined) break;
      this.keptBytes -= oldest[0].length;
    }
    this.kept.set(key, value);
    this.keptBytes += data.length;
    return value;
  }
}

export function isPropagateEncoding(data: Uint8Array): boolean {
  if (data.length <= PROPAGATE_HEAD.length) return false;
  for (let i = 0; i < PROPAGATE_HEAD.length; i++) if (data[i] !== PROPAGATE_HEAD[i]) return false;
  return true;
}

/** The first key of a CATCHUP_REP in canonical MessagePack, "consProof" (no other message has it), as a fixstr. */
const CATCHUP_REP_FIRST_KEY = Uint8Array.from([0xa9, 0x63, 0x6f, 0x6e, 0x73, 0x50, 0x72, 0x6f, 0x6f, 0x66]);

/** A fixmap (a CATCHUP_REP has 4 or 5 entries) whose first key is "consProof". */
function isCatchupRepEncoding(data: Uint8Array): boolean {
  if (data.length <= 1 + CATCHUP_REP_FIRST_KEY.length || (data[0] & 0xf0) !== 0x80) return false;
  for (let i = 0; i < CATCHUP_REP_FIRST_KEY.length; i++) if (data[1 + i] !== CATCHUP_REP_FIRST_KEY[i]) return false;
  return true;
}
