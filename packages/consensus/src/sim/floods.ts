// The messages of a flooding Byzantine node (issue #15): well-formed messages that cost honest
// nodes memory or work when kept — INSTANCE_CHANGE for any future view, unsolicited
// MESSAGE_RESPONSE{NEW_VIEW} and {VIEW_CHANGE} bodies, VIEW_CHANGE_ACKs naming invented authors,
// and 3PC messages of future views and far sequence numbers that fill the stash. The checkers
// bound every honest core's footprint (checks.ts) while the flood lasts.
import type { NodeMessage } from '../messages.js';
import type { Prng } from './prng.js';

/** messages a flooder sends to each peer per burst */
export const FLOOD_BURST = 24;

function hex(rng: Prng): string {
  let s = '';
  for (let i = 0; i < 64; i++) s += '0123456789abcdef'[rng.int(0, 15)];
  return s;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function b58(rng: Prng): string {
  let s = '';
  for (let i = 0; i < 44; i++) s += B58[rng.int(0, B58.length - 1)];
  return s;
}

function newView(rng: Prng, viewNo: number, names: readonly string[]): NodeMessage {
  const seqNoEnd = rng.int(0, 3) * 100;
  return {
    op: 'NEW_VIEW',
    viewNo,
    viewChanges: names.map((a): [string, string] => [a, hex(rng)]),
    checkpoint: { op: 'CHECKPOINT', instId: 0, viewNo: Math.max(0, viewNo - 1), seqNoStart: 0, seqNoEnd, digest: seqNoEnd === 0 ? null : b58(rng) },
    batches: Array.from({ length: rng.int(0, 20) }, (_, i) => ({
      view_no: viewNo - 1,
      pp_view_no: viewNo - 1,
      pp_seq_no: seqNoEnd + i + 1,
      pp_digest: hex(rng),
    })),
  };
}

/** One burst of hostile messages from `self` to one peer; `view` is the flooder's current view. */
export function floodBurst(rng: Prng, view: number, names: readonly string[], self: string): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < FLOOD_BURST; i++) {
    switch (rng.int(0, 7)) {
      case 0:
        out.push({ op: 'INSTANCE_CHANGE', viewNo: view + rng.int(1, 1_000_000), reason: 25 });
        break;
      case 1: {
        const v = view + rng.int(0, 3);
        out.push({ op: 'MESSAGE_RESPONSE', msg_type: 'NEW_VIEW', params: { viewNo: v }, msg: newView(rng, v, names) });
        break;
      }
      case 2:
        out.push({ op: 'VIEW_CHANGE_ACK', viewNo: view + rng.int(0, 1), name: `Invented${rng.int(0, 1_000_000)}`, digest: hex(rng) });
        break;
      case 3: {
        const v = view + rng.int(0, 2);
        const vc = { op: 'VIEW_CHANGE', viewNo: v, stableCheckpoint: 0, prepared: [], preprepared: [], checkpoints: [] };
        out.push({
          op: 'MESSAGE_RESPONSE',
          msg_type: 'VIEW_CHANGE',
          params: { viewNo: v, name: rng.pick(names.filter((a) => a !== self)), digest: hex(rng) },
          msg: vc,
        });
        break;
      }
      case 4:
        out.push({
          op: 'PREPARE',
          instId: 0,
          viewNo: view + rng.int(1, 50),
          ppSeqNo: rng.int(1, 10_000),
          ppTime: 1_700_000_000,
          digest: hex(rng),
          stateRootHash: b58(rng),
          txnRootHash: b58(rng),
          auditTxnRootHash: b58(rng),
        });
        break;
      case 5:
        out.push({ op: 'COMMIT', instId: 0, viewNo: view + rng.int(0, 50), ppSeqNo: rng.int(1, 10_000), blsSigs: {} });
        break;
      case 6:
        out.push({ op: 'CHECKPOINT', instId: 0, viewNo: view, seqNoStart: 0, seqNoEnd: rng.int(1, 100) * 100, digest: b58(rng) });
        break;
      default:
        out.push({ op: 'VIEW_CHANGE', viewNo: view + rng.int(1, 1_000), stableCheckpoint: 0, prepared: [], preprepared: [], checkpoints: [] });
        break;
    }
  }
  return out;
}
