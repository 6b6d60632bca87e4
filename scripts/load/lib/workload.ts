// The requests of a load run, built and signed before the clock starts so that the generator is not
// what limits the rate: fresh DIDs created by the standard local pool's trustee and stewards
// (formats.md 2.3), ATTRIBs written by their owners, SCHEMAs by endorsers, GET_NYM reads of DIDs on
// the ledger. Authors of ATTRIB and SCHEMA (and the read targets) are NYMs written in a setup phase.
import { generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { abbreviatedVerkey, didFromVerkey, stringifyJson, type Request } from '@quire/common';
import { DidKey, buildAttribRequest, buildGetNymRequest, buildNymRequest, buildSchemaRequest, signRequest } from '@quire/client';

export const MIXES = ['nym', 'attrib', 'schema', 'read', 'mixed'] as const;
export type Mix = (typeof MIXES)[number];
export type RequestKind = 'nym' | 'attrib' | 'schema' | 'read';

/** Seeds of the standard local pool (formats.md 2.3): Trustee1 and Steward1..4. */
export const TRUSTEE_SEED = '000000000000000000000000Trustee1';
export const STEWARD_SEEDS = [1, 2, 3, 4].map((i) => `${'0'.repeat(24)}Steward${i}`);

export class WorkloadError extends Error {
  constructor(
    readonly code: 'INVALID_MIX' | 'INVALID_COUNT' | 'NO_SUBMITTERS' | 'NO_AUTHORS' | 'NO_READ_TARGETS',
    message: string,
  ) {
    super(message);
    this.name = 'WorkloadError';
  }
}

/** One request, ready to go: the signed request and its wire bytes. */
export interface PreparedRequest {
  kind: RequestKind;
  request: Request;
  payload: Uint8Array;
}

/**
 * Composition of the `mixed` workload, per 20 requests: 10 NYM, 4 ATTRIB, 2 SCHEMA, 4 GET_NYM.
 * Interleaved so that any window of the run has the same mix.
 */
const MIXED_PATTERN: RequestKind[] = [
  'nym',
  'read',
  'nym',
  'attrib',
  'nym',
  'schema',
  'nym',
  'read',
  'nym',
  'attrib',
  'nym',
  'read',
  'nym',
  'attrib',
  'nym',
  'schema',
  'nym',
  'read',
  'nym',
  'attrib',
];

export function parseMix(s: string): Mix {
  if (!(MIXES as readonly string[]).includes(s)) throw new WorkloadError('INVALID_MIX', `--mix must be one of ${MIXES.join(', ')}, got "${s}"`);
  return s as Mix;
}

/** The kind of request `index` of a mix. */
export function kindAt(mix: Mix, index: number): RequestKind {
  return mix === 'mixed' ? MIXED_PATTERN[index % MIXED_PATTERN.length]! : mix;
}

/** What a mix needs on the ledger before it starts: author DIDs (ATTRIB owners, SCHEMA endorsers) and DIDs to read. */
export function setupNeeds(mix: Mix, count: number): { authors: number; readTargets: number } {
  const uses = (k: RequestKind): boolean => mix === k || (mix === 'mixed' && MIXED_PATTERN.includes(k));
  // each author writes a bounded share of the ATTRIBs/SCHEMAs: many authors spread the state keys
  const authors = uses('attrib') || uses('schema') ? Math.min(500, Math.max(8, Math.ceil(count / 100))) : 0;
  const readTargets = uses('read') ? Math.max(0, 64 - authors) : 0;
  return { authors, readTargets };
}

const enc = new TextEncoder();

function prepared(kind: RequestKind, request: Request): PreparedRequest {
  return { kind, request, payload: enc.encode(stringifyJson(request)) };
}

/** The submitters of NYM writes: Trustee1 and Steward1..4. */
export function standardSubmitters(): DidKey[] {
  return [TRUSTEE_SEED, ...STEWARD_SEEDS].map((s) => DidKey.fromSeed(s));
}

/** NYMs that create the setup DIDs: ENDORSER role (so they may write SCHEMAs; they own their ATTRIBs anyway). */
export function setupRequests(submitters: readonly DidKey[], dids: readonly DidKey[]): PreparedRequest[] {
  if (submitters.length === 0) throw new WorkloadError('NO_SUBMITTERS', 'setup needs at least one trustee or steward key');
  return dids.map((d, i) => {
    const by = submitters[i % submitters.length]!;
    return prepared('nym', signRequest(buildNymRequest({ submitter: by.did, dest: d.did, verkey: d.verkey, role: '101' }), by));
  });
}

export interface PrepareInput {
  mix: Mix;
  count: number;
  /** NYM submitters (trustee / stewards). */
  submitters: readonly DidKey[];
  /** DIDs on the ledger with role ENDORSER, owners of their ATTRIBs and authors of SCHEMAs. */
  authors: readonly DidKey[];
  /** DIDs on the ledger to read with GET_NYM (authors are read too). */
  readTargets: readonly string[];
  /** Distinguishes the names written by one run from another's (SCHEMA name, ATTRIB key). */
  runTag: string;
}

export interface PreparedWorkload {
  requests: PreparedRequest[];
  /** DIDs created by the NYM writes, in request order. */
  createdDids: string[];
  /** Wall-clock ms spent building and signing, and the resulting rate. */
  elapsedMs: number;
  perSecond: number;
}

/**
 * Builds and signs `count` requests of `mix` ahead of time. Input errors throw at once (WorkloadError); the signing
 * itself yields to the event loop every {@link PRESIGN_SLICE} requests, so that the generator's open sessions keep
 * reading what the nodes still send (replies to earlier writes). While one synchronous loop held the event loop for the
 * 8-15 s of a large pre-signing, the nodes saw the generator's sessions reset, and the first request on each afterwards
 * failed with "session closed".
 */
export function prepareWorkload(input: PrepareInput): Promise<PreparedWorkload> {
  const { mix, count } = input;
  if (!Number.isSafeInteger(count) || count < 0) throw new WorkloadError('INVALID_COUNT', `request count must be an integer >= 0, got ${count}`);
  const started = performance.now();
  const kinds = new Set<RequestKind>();
  for (let i = 0; i < Math.min(count, MIXED_PATTERN.length); i++) kinds.add(kindAt(mix, i));
  if (kinds.has('nym') && input.submitters.length === 0) throw new WorkloadError('NO_SUBMITTERS', 'NYM writes need a trustee or steward key');
  if ((kinds.has('attrib') || kinds.has('schema')) && input.authors.length === 0)
    throw new WorkloadError('NO_AUTHORS', 'ATTRIB and SCHEMA writes need author DIDs created in the setup phase');
  const targets = [...input.readTargets, ...input.authors.map((a) => a.did)];
  if (kinds.has('read') && targets.length === 0) throw new WorkloadError('NO_READ_TARGETS', 'GET_NYM reads need DIDs on the ledger');
  return signWorkload(input, started, targets);
}

/** Requests signed between two yields to the event loop (about 0.25 s of signing here). */
const PRESIGN_SLICE = 2_000;

async function signWorkload(input: PrepareInput, started: number, targets: string[]): Promise<PreparedWorkload> {
  const { mix, count } = input;
  const requests: PreparedRequest[] = new Array(count);
  const createdDids: string[] = [];
  const counters = { attrib: 0, schema: 0, read: 0, nym: 0 };
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % PRESIGN_SLICE === 0) await new Promise((r) => setImmediate(r));
    const kind = kindAt(mix, i);
    const n = counters[kind]++;
    let request: Request;
    switch (kind) {
      case 'nym': {
        const by = input.submitters[n % input.submitters.length]!;
        const d = freshIdentity();
        createdDids.push(d.did);
        request = signRequest(buildNymRequest({ submitter: by.did, dest: d.did, verkey: d.verkey }), by);
        break;
      }
      case 'attrib': {
        const owner = input.authors[n % input.authors.length]!;
        request = signRequest(
          buildAttribRequest({ submitter: owner.did, dest: owner.did, raw: { [`load-${input.runTag}-${n}`]: { endpoint: `https://agent.example/${n}` } } }),
          owner,
        );
        break;
      }
      case 'schema': {
        const author = input.authors[n % input.authors.length]!;
        request = signRequest(
          buildSchemaRequest({
            submitter: author.did,
            name: `load-${input.runTag}`,
            version: `${Math.floor(n / input.authors.length)}.${n % input.authors.length}`,
            attrNames: ['name', 'age', 'sex', 'height'],
          }),
          author,
        );
        break;
      }
      case 'read': {
        // reads of DIDs known to be on the ledger before the run starts
        request = buildGetNymRequest({ dest: targets[n % targets.length]! });
        break;
      }
    }
    requests[i] = prepared(kind, request);
  }
  const elapsedMs = performance.now() - started;
  return { requests, createdDids, elapsedMs, perSecond: elapsedMs > 0 ? (count * 1000) / elapsedMs : 0 };
}

/**
 * A fresh DID and verkey of a real ed25519 key whose private half is not kept (the NYM's target never signs in
 * this workload). Key generation is about 4x faster than deriving a key pair from a random seed.
 */
export function freshIdentity(): { did: string; verkey: string } {
  const { publicKey } = generateKeyPairSync('ed25519');
  // SPKI DER of an ed25519 key: a 12-byte header, then the 32-byte key
  const pk = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
  return { did: didFromVerkey(pk), verkey: abbreviatedVerkey(pk) };
}

/** Fresh random DIDs with their keys, for the setup phase (they sign ATTRIBs and SCHEMAs). */
export function freshDids(n: number): DidKey[] {
  return Array.from({ length: n }, () => DidKey.random());
}
