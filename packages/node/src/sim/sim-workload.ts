// The client workload of a simulated pool with the real executor: requests exactly as a client of
// the ledger signs them (formats.md §3: ed25519 over the signing serialization).
// - writes: NYMs of fresh DIDs by Trustee1 and the stewards of the genesis;
// - invalid writes: a steward creating a TRUSTEE, refused by the auth rules at dynamic validation;
// - payload variants: the same payload with `signatures: {author: sig}` instead of `signature`
//   (another full digest, the same payload digest);
// - NODE txns of the membership mix by the owning steward: a new validator with its BLS key and
//   proof of possession, a BLS key rotation, demotion and promotion.
import { Role, TxnType, sha256, signatureInput } from '@quire/common';
import type { ClientRequestBody } from '@quire/consensus';
import type { SimWorkload as SimWorkloadContract } from '@quire/consensus/sim';
import { Ed25519Signer } from '@quire/crypto';
import { parseRequest } from '@quire/requests';
import { ownerOf, simBlsKey, simNodeAddress, simNodeKeys, stewardSigner, trusteeSigner } from './sim-identities.js';
import { ConsensusError, ConsensusErrorCode } from '@quire/consensus';

const VALIDATOR = 'VALIDATOR';
const targets = new Map<number, Ed25519Signer>();

function sign(author: Ed25519Signer, reqId: number, operation: Record<string, unknown>): ClientRequestBody {
  const req: Record<string, unknown> = { identifier: author.did, reqId, protocolVersion: 2, operation };
  req.signature = author.signBase58(signatureInput(req));
  return req as ClientRequestBody;
}

export class SimWorkload implements SimWorkloadContract {
  private nextNodeReqId = 1_800_000_000_000;
  private readonly authors: Ed25519Signer[];

  constructor(
    genesisValidators: number,
    /** BLS key generation per alias (rotations so far), shared with the replicas' crypto */
    readonly generations: Map<string, number> = new Map(),
  ) {
    this.authors = [trusteeSigner(), ...Array.from({ length: Math.min(4, genesisValidators) }, (_, i) => stewardSigner(i + 1))];
  }

  /** The i-th fresh DID of a run (every run starts from genesis, so runs may share them; derived once per process). */
  private target(i: number): Ed25519Signer {
    let t = targets.get(i);
    if (t === undefined) {
      t = Ed25519Signer.fromSeed(sha256(`quire-sim-target|${i}`));
      targets.set(i, t);
    }
    return t;
  }

  write(i: number, invalid: boolean): ClientRequestBody {
    const t = this.target(i);
    const reqId = 1_700_000_000_000 + i;
    if (invalid) {
      // a steward may not create a TRUSTEE (auth map NYM ADD role 0): valid envelope and signature, refused at ordering
      return sign(this.authors[1 + (i % (this.authors.length - 1))], reqId, { type: TxnType.NYM, dest: t.did, verkey: t.verkey, role: Role.TRUSTEE });
    }
    return sign(this.authors[i % this.authors.length], reqId, { type: TxnType.NYM, dest: t.did, verkey: t.verkey });
  }

  /** `signature` <-> `signatures: {author: signature}`: the same payload and signature under another full digest. */
  variant(request: ClientRequestBody): ClientRequestBody {
    const { signature, signatures, ...payload } = request;
    const author = payload.identifier;
    if (typeof author !== 'string') throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'a variant needs a request with an identifier' });
    if (typeof signature === 'string') return { ...payload, signatures: { [author]: signature } };
    const own = (signatures as Record<string, unknown> | undefined)?.[author];
    if (typeof own !== 'string') throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: "a variant needs the author's signature" });
    return { ...payload, signature: own };
  }

  addValidator(alias: string): ClientRequestBody {
    const keys = simNodeKeys(alias);
    const a = simNodeAddress(alias);
    const bls = simBlsKey(alias, this.generations.get(alias) ?? 0);
    return this.nodeTxn(alias, keys.dest, {
      alias,
      node_ip: a.nodeIp,
      node_port: a.nodePort,
      client_ip: a.clientIp,
      client_port: a.clientPort,
      services: [VALIDATOR],
      blskey: bls.blskey,
      blskey_pop: bls.blskey_pop,
    });
  }

  rotateBlsKey(alias: string): ClientRequestBody {
    const gen = (this.generations.get(alias) ?? 0) + 1;
    this.generations.set(alias, gen);
    const bls = simBlsKey(alias, gen);
    return this.nodeTxn(alias, simNodeKeys(alias).dest, { alias, blskey: bls.blskey, blskey_pop: bls.blskey_pop });
  }

  setValidator(alias: string, validator: boolean): ClientRequestBody {
    return this.nodeTxn(alias, simNodeKeys(alias).dest, { alias, services: validator ? [VALIDATOR] : [] });
  }

  private nodeTxn(alias: string, dest: string, data: Record<string, unknown>): ClientRequestBody {
    return sign(ownerOf(alias), this.nextNodeReqId++, { type: TxnType.NODE, dest, data });
  }

  info(request: ClientRequestBody): { digest: string; payloadDigest: string } {
    const r = parseRequest(request);
    return { digest: r.digest, payloadDigest: r.payloadDigest };
  }
}
