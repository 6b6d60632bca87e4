// Identifiers the gateway takes in paths: DIDs (unqualified, did:sov, did:indy) and the ledger object ids of Indy
// (legacy `<did>:2:<name>:<version>` ...) and of did:indy AnonCreds (`did:indy:<ns>:<did>/anoncreds/v0/SCHEMA/...`,
// did:indy method specification, "AnonCreds objects"). Every parser throws GatewayError INVALID_PARAMETER naming
// the field and what is wrong.
import { isValidDid } from '@quire/common';
import { invalidParameter } from './errors.js';

/** did:indy namespaces: `namestring [":" namestring]`, a namestring a lower-case letter then lower-case letters,
 * digits, `_` or `-` (did:indy spec, "Namespace"). */
const NAMESPACE = /^[a-z][a-z0-9_-]*(?::[a-z][a-z0-9_-]*)?$/;

export interface ParsedDid {
  /** The unqualified DID the ledger knows (base58 of 16 bytes). */
  id: string;
  method: 'indy' | 'sov' | 'unqualified';
  /** The namespace of a did:indy DID. */
  namespace?: string;
}

/** Which DID method a string names (`did:<method>:`), or undefined when it is not a `did:` URI. */
export function didMethodOf(s: string): string | undefined {
  const m = /^did:([a-z0-9]+):/.exec(s);
  return m?.[1];
}

/** An unqualified DID, `did:sov:<id>` or `did:indy:<namespace>:<id>`. */
export function parseDid(s: string, field = 'did'): ParsedDid {
  if (s.startsWith('did:indy:')) {
    const rest = s.slice('did:indy:'.length);
    const cut = rest.lastIndexOf(':');
    if (cut <= 0) throw invalidParameter(field, 'did:indy:<namespace>:<id> expected');
    const namespace = rest.slice(0, cut);
    const id = rest.slice(cut + 1);
    if (!NAMESPACE.test(namespace)) throw invalidParameter(field, `namespace '${namespace}' is not a did:indy namespace (namestring[:namestring])`);
    if (!isValidDid(id)) throw invalidParameter(field, 'the id is not a base58 DID of 16 or 32 bytes');
    return { id, method: 'indy', namespace };
  }
  if (s.startsWith('did:sov:')) {
    const id = s.slice('did:sov:'.length);
    if (!isValidDid(id)) throw invalidParameter(field, 'the id is not a base58 DID of 16 or 32 bytes');
    return { id, method: 'sov' };
  }
  if (s.startsWith('did:')) throw invalidParameter(field, `DID method '${didMethodOf(s) ?? s}' is not supported (did:indy, did:sov or an unqualified DID)`);
  if (!isValidDid(s)) throw invalidParameter(field, 'not a DID (base58 of 16 or 32 bytes)');
  return { id: s, method: 'unqualified' };
}

/** A did:indy AnonCreds object id: `did:indy:<ns>:<did>/anoncreds/v0/<TYPE>/<segments...>`. */
function parseIndyObjectId(s: string, type: string, segments: number, field: string): { did: ParsedDid; parts: string[] } | undefined {
  if (!s.startsWith('did:indy:')) return undefined;
  const slash = s.indexOf('/');
  if (slash < 0) throw invalidParameter(field, `did:indy:<ns>:<did>/anoncreds/v0/${type}/... expected`);
  const did = parseDid(s.slice(0, slash), field);
  const path = s.slice(slash + 1).split('/');
  if (path[0] !== 'anoncreds' || path[1] !== 'v0' || path[2] !== type) throw invalidParameter(field, `path /anoncreds/v0/${type}/ expected after the DID`);
  const parts = path.slice(3).map((p) => decodeSegment(p, field));
  if (parts.length !== segments || parts.some((p) => p === '')) throw invalidParameter(field, `${segments} non-empty segments expected after ${type}/`);
  return { did, parts };
}

/** One percent-encoded path segment of a did:indy object id. */
function decodeSegment(segment: string, field: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidParameter(field, `'${segment}' is not a valid percent-encoded segment`);
  }
}

function seqNoOf(v: string, field: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(v) || !Number.isSafeInteger(Number(v))) throw invalidParameter(field, `'${v}' is not a positive integer (the schema's seqNo)`);
  return Number(v);
}

export interface SchemaId {
  dest: string;
  name: string;
  version: string;
  /** did:indy namespace when the id was a did:indy one. */
  namespace?: string;
}

/** `<did>:2:<name>:<version>` or `did:indy:<ns>:<did>/anoncreds/v0/SCHEMA/<name>/<version>`. */
export function parseSchemaId(s: string, field = 'schemaId'): SchemaId {
  const indy = parseIndyObjectId(s, 'SCHEMA', 2, field);
  if (indy !== undefined) return { dest: indy.did.id, name: indy.parts[0], version: indy.parts[1], namespace: indy.did.namespace };
  const p = s.split(':');
  if (p.length !== 4 || p[1] !== '2') throw invalidParameter(field, '<did>:2:<name>:<version> expected');
  if (!isValidDid(p[0])) throw invalidParameter(field, 'the issuer part is not a DID');
  if (p[2] === '' || p[3] === '') throw invalidParameter(field, 'empty name or version');
  return { dest: p[0], name: p[2], version: p[3] };
}

export interface CredDefId {
  origin: string;
  /** The seqNo of the schema's txn. */
  ref: number;
  signatureType: string;
  tag: string;
  namespace?: string;
}

/** `<did>:3:CL:<schemaSeqNo>:<tag>` (tag optional) or `did:indy:<ns>:<did>/anoncreds/v0/CLAIM_DEF/<schemaSeqNo>/<tag>`. */
export function parseCredDefId(s: string, field = 'credDefId'): CredDefId {
  const indy = parseIndyObjectId(s, 'CLAIM_DEF', 2, field);
  if (indy !== undefined)
    return { origin: indy.did.id, ref: seqNoOf(indy.parts[0], field), signatureType: 'CL', tag: indy.parts[1], namespace: indy.did.namespace };
  const p = s.split(':');
  if ((p.length !== 4 && p.length !== 5) || p[1] !== '3') throw invalidParameter(field, '<did>:3:CL:<schemaSeqNo>:<tag> expected');
  if (!isValidDid(p[0])) throw invalidParameter(field, 'the issuer part is not a DID');
  if (p[2] === '') throw invalidParameter(field, 'empty signature type');
  const tag = p[4] ?? 'default';
  if (tag === '') throw invalidParameter(field, 'empty tag');
  return { origin: p[0], ref: seqNoOf(p[3], field), signatureType: p[2], tag };
}

export interface RevRegDefId {
  /** The legacy id, as the ledger keys the definition. */
  id: string;
  issuer: string;
  credDefId: CredDefId;
  /** The legacy cred def id inside it. */
  credDefIdText: string;
  tag: string;
  namespace?: string;
}

/**
 * `<did>:4:<credDefId>:CL_ACCUM:<tag>` or `did:indy:<ns>:<did>/anoncreds/v0/REV_REG_DEF/<schemaSeqNo>/<credDefTag>/<tag>`
 * (the latter mapped to the legacy id the ledger stores).
 */
export function parseRevRegDefId(s: string, field = 'revRegDefId'): RevRegDefId {
  const indy = parseIndyObjectId(s, 'REV_REG_DEF', 3, field);
  if (indy !== undefined) {
    const [seq, cdTag, tag] = indy.parts as [string, string, string];
    const issuer = indy.did.id;
    const credDefIdText = `${issuer}:3:CL:${seqNoOf(seq, field)}:${cdTag}`;
    return {
      id: `${issuer}:4:${credDefIdText}:CL_ACCUM:${tag}`,
      issuer,
      credDefId: parseCredDefId(credDefIdText, field),
      credDefIdText,
      tag,
      namespace: indy.did.namespace,
    };
  }
  const p = s.split(':');
  if (p.length < 8 || p[1] !== '4') throw invalidParameter(field, '<did>:4:<credDefId>:CL_ACCUM:<tag> expected');
  if (!isValidDid(p[0])) throw invalidParameter(field, 'the issuer part is not a DID');
  const tag = p[p.length - 1];
  if (p[p.length - 2] !== 'CL_ACCUM' || tag === '') throw invalidParameter(field, 'the id must end with :CL_ACCUM:<tag>');
  const credDefIdText = p.slice(2, p.length - 2).join(':');
  return { id: s, issuer: p[0], credDefId: parseCredDefId(credDefIdText, field), credDefIdText, tag };
}

/** Ledger names of GET /txn/{ledger}/{seqNo}: as indy-vdr's LedgerType, plus the audit ledger. */
export function parseLedger(s: string, field = 'ledger'): number {
  const names: Record<string, number> = { pool: 0, domain: 1, config: 2, audit: 3, '0': 0, '1': 1, '2': 2, '3': 3 };
  const id = names[s.toLowerCase()];
  if (id === undefined) throw invalidParameter(field, 'one of pool, domain, config, audit (or 0-3) expected');
  return id;
}

/** A positive integer path or query parameter. */
export function parsePositive(s: string, field: string, min = 1): number {
  if (!/^[0-9]{1,16}$/.test(s) || !Number.isSafeInteger(Number(s)) || Number(s) < min) throw invalidParameter(field, `an integer >= ${min} expected`);
  return Number(s);
}
