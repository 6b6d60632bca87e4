// DID resolution in the Universal Resolver driver format (GET /1.0/identifiers/{did}): did:indy per the did:indy
// method specification (document from the NYM's verkey, its diddocContent, else the legacy `endpoint` ATTRIB, as
// indy-vdr's resolver assembles it) and did:sov. `versionId` (a NYM seqNo) and `versionTime` (ISO 8601 or seconds)
// resolve an older version through GET_NYM's seqNo / timestamp. Errors are those the DID Resolution specification
// names: invalidDid (400), notFound (404), methodNotSupported (501).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildGetAttribRequest, buildGetNymRequest } from '@quire/client';
import { CodedError, b58decode, b58encode, isPlainObject } from '@quire/common';
import { GatewayError } from './errors.js';
import { sendJson, type Verified } from './http.js';
import { didMethodOf, parseDid, type ParsedDid } from './ids.js';
import { jsonText, parseJsonField } from './json.js';
import type { PoolCaller } from './pool-call.js';
import type { RouteContext } from './vdr-routes.js';

export const DID_RESOLUTION_CONTEXT = 'https://w3id.org/did-resolution/v1';
export const DID_CORE_CONTEXT = 'https://www.w3.org/ns/did/v1';
export const ED25519_2018_CONTEXT = 'https://w3id.org/security/suites/ed25519-2018/v1';

export type ResolutionError = 'invalidDid' | 'notFound' | 'methodNotSupported' | 'internalError';
const ERROR_STATUS: Record<ResolutionError, number> = { invalidDid: 400, notFound: 404, methodNotSupported: 501, internalError: 500 };

/** The data of each {@link ResolutionError}: the text sent as `errorMessage`. */
export type ResolutionFailureData = { [K in ResolutionError]: { reason: string } };

/**
 * A DID that cannot be resolved: its code is the DID Resolution error (`didResolutionMetadata.error`), its message and
 * `data.reason` the `errorMessage`.
 */
export class ResolutionFailure extends CodedError<ResolutionError, ResolutionFailureData> {
  constructor(error: ResolutionError, reason: string) {
    super(error, { reason }, reason);
  }

  /** The DID Resolution error (the code). */
  get error(): ResolutionError {
    return this.code;
  }
}

export interface ResolutionResult {
  '@context': string;
  didDocument: Record<string, unknown> | null;
  didResolutionMetadata: Record<string, unknown>;
  didDocumentMetadata: Record<string, unknown>;
}

/** A verkey as the NYM holds it (`~` abbreviated, or full) made full (indy-vdr's expand_verkey). */
export function expandVerkey(did: string, verkey: string): string {
  if (!verkey.startsWith('~')) return verkey;
  try {
    const a = b58decode(did);
    const b = b58decode(verkey.slice(1));
    const out = new Uint8Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return b58encode(out);
  } catch {
    return verkey;
  }
}

/** merge_diddoc of indy-vdr: `authentication` and `verificationMethod` are appended to, other members merged. */
function mergeDiddoc(base: Record<string, unknown>, content: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(content)) {
    if (k === 'authentication' || k === 'verificationMethod') {
      base[k] = [...((base[k] as unknown[]) ?? []), ...(Array.isArray(v) ? v : [v])];
    } else if (isPlainObject(v) && isPlainObject(base[k])) {
      mergeDiddoc(base[k] as Record<string, unknown>, v);
    } else {
      base[k] = v;
    }
  }
}

export interface DocumentInput {
  /** `did:indy:<ns>:<id>` or `did:sov:<id>` */
  did: string;
  id: string;
  verkey: string;
  diddocContent?: Record<string, unknown>;
  /** The legacy endpoint ATTRIB's `endpoint` object ({endpoint, routingKeys?, types?}). */
  endpoint?: Record<string, unknown>;
}

/** The DID document of the did:indy specification ("DIDDoc assembly"). */
export function indyDidDocument(i: DocumentInput): Record<string, unknown> {
  const vm = `${i.did}#verkey`;
  const doc: Record<string, unknown> = {
    '@context': [DID_CORE_CONTEXT, ED25519_2018_CONTEXT],
    id: i.did,
    verificationMethod: [{ id: vm, type: 'Ed25519VerificationKey2018', controller: i.did, publicKeyBase58: expandVerkey(i.id, i.verkey) }],
    authentication: [vm],
  };
  if (i.diddocContent !== undefined) {
    mergeDiddoc(doc, i.diddocContent);
  } else if (i.endpoint !== undefined) {
    doc.service = legacyServices(i.did, vm, i.endpoint);
  }
  return doc;
}

/**
 * The services of a legacy endpoint ATTRIB (did:indy spec, "DID Document from the endpoint attribute"): the
 * `endpoint` address as a `did-communication` service with the verkey as recipient key and the attribute's routing
 * keys, plus a `DIDCommMessaging` service when its `types` name DIDComm v2; any other named address as a service of
 * that type.
 */
function legacyServices(did: string, vm: string, ep: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const routingKeys = Array.isArray(ep.routingKeys) ? ep.routingKeys : [];
  const types = Array.isArray(ep.types) ? ep.types.map(String) : ['endpoint', 'did-communication'];
  if (typeof ep.endpoint === 'string') {
    if (types.includes('endpoint')) out.push({ id: `${did}#endpoint`, type: 'endpoint', serviceEndpoint: ep.endpoint });
    if (types.includes('did-communication')) {
      out.push({
        id: `${did}#did-communication`,
        type: 'did-communication',
        priority: 0,
        recipientKeys: [vm],
        routingKeys,
        accept: ['didcomm/aip2;env=rfc19'],
        serviceEndpoint: ep.endpoint,
      });
    }
    if (types.includes('DIDComm') || types.includes('DIDCommMessaging')) {
      out.push({ id: `${did}#didcomm-1`, type: 'DIDCommMessaging', serviceEndpoint: { uri: ep.endpoint, routingKeys, accept: ['didcomm/v2'] } });
    }
  }
  for (const [k, v] of Object.entries(ep)) {
    if (k === 'endpoint' || k === 'routingKeys' || k === 'types' || typeof v !== 'string') continue;
    out.push({ id: `${did}#${k}`, type: k, serviceEndpoint: v });
  }
  return out;
}

function iso(seconds: unknown): string | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : undefined;
}

/** versionTime: ISO 8601 or integer seconds since the epoch. */
export function parseVersionTime(v: string): number {
  if (/^[0-9]{1,12}$/.test(v)) return Number(v);
  const ms = Date.parse(v);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(v))
    throw new ResolutionFailure('invalidDid', `versionTime '${v}' is not ISO 8601 or seconds since the epoch`);
  return Math.floor(ms / 1000);
}

export interface ResolveOptions {
  versionId?: string;
  versionTime?: string;
}

/** Resolves a DID against the pool; every read is verified. */
export async function resolveDid(
  caller: PoolCaller,
  namespace: string,
  didText: string,
  o: ResolveOptions = {},
): Promise<{ result: ResolutionResult; verified: Verified }> {
  const method = didMethodOf(didText);
  if (method === undefined) throw new ResolutionFailure('invalidDid', `'${didText}' is not a DID`);
  if (method !== 'indy' && method !== 'sov') throw new ResolutionFailure('methodNotSupported', `DID method '${method}' is not supported (did:indy, did:sov)`);
  let parsed: ParsedDid;
  try {
    parsed = parseDid(didText, 'did');
  } catch (e) {
    throw new ResolutionFailure('invalidDid', e instanceof GatewayError ? String(e.data.reason) : String(e));
  }
  if (parsed.method === 'indy' && parsed.namespace !== namespace)
    throw new ResolutionFailure('notFound', `namespace '${parsed.namespace}' is not served here (this pool: '${namespace}')`);
  const historic: { seqNo?: number; timestamp?: number } = {};
  if (o.versionId !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(o.versionId)) throw new ResolutionFailure('invalidDid', `versionId '${o.versionId}' is not a txn seqNo`);
    historic.seqNo = Number(o.versionId);
  } else if (o.versionTime !== undefined) {
    historic.timestamp = parseVersionTime(o.versionTime);
  }
  const nym = await caller.read(buildGetNymRequest({ dest: parsed.id, ...historic }));
  const data = parseJsonField(nym.result.data);
  if (!isPlainObject(data))
    throw new ResolutionFailure(
      'notFound',
      `${didText} is not on the ledger${o.versionId !== undefined || o.versionTime !== undefined ? ' at that version' : ''}`,
    );
  let verified: Verified = nym.verified ? 'proof' : 'consensus';
  const verkey = typeof data.verkey === 'string' ? data.verkey : undefined;
  if (verkey === undefined) throw new ResolutionFailure('notFound', `${didText} has no verkey (deactivated)`);
  const seqNo = typeof data.seqNo === 'number' ? data.seqNo : (nym.result.seqNo as number | undefined);
  const txnTime = typeof data.txnTime === 'number' ? data.txnTime : (nym.result.txnTime as number | undefined);
  let diddocContent: Record<string, unknown> | undefined;
  const dc = parseJsonField(data.diddocContent);
  if (isPlainObject(dc)) diddocContent = dc;
  let endpoint: Record<string, unknown> | undefined;
  if (diddocContent === undefined) {
    // the legacy endpoint ATTRIB, as of the same time as the NYM version asked for
    const at = historic.timestamp ?? (historic.seqNo !== undefined ? txnTime : undefined);
    const attr = await caller.read(buildGetAttribRequest({ dest: parsed.id, raw: 'endpoint', ...(at !== undefined ? { timestamp: at } : {}) }));
    if (!attr.verified) verified = 'consensus';
    const raw = parseJsonField(attr.result.data);
    if (isPlainObject(raw) && isPlainObject(raw.endpoint)) endpoint = raw.endpoint;
  }
  const did = parsed.method === 'indy' ? `did:indy:${namespace}:${parsed.id}` : `did:sov:${parsed.id}`;
  const didDocument = indyDidDocument({
    did,
    id: parsed.id,
    verkey,
    ...(diddocContent !== undefined ? { diddocContent } : {}),
    ...(endpoint !== undefined ? { endpoint } : {}),
  });
  if (parsed.method === 'sov' && diddocContent === undefined) {
    // did:sov documents also name the key for assertions (the Sovrin method's legacy shape)
    didDocument.assertionMethod = [`${did}#verkey`];
  }
  const didDocumentMetadata: Record<string, unknown> = {};
  if (seqNo !== undefined) didDocumentMetadata.versionId = String(seqNo);
  const updated = iso(txnTime);
  if (updated !== undefined) didDocumentMetadata.updated = updated;
  return {
    result: {
      '@context': DID_RESOLUTION_CONTEXT,
      didDocument,
      didResolutionMetadata: { contentType: 'application/did+ld+json', retrieved: new Date().toISOString(), verified },
      didDocumentMetadata,
    },
    verified,
  };
}

export function registerResolverRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const didText = decodeURIComponent((req.params as { '*': string })['*'] ?? '');
    const q = req.query as { versionId?: string; versionTime?: string };
    try {
      const { result, verified } = await resolveDid(ctx.caller, ctx.namespace, didText, q);
      return sendJson(reply, 200, jsonText(result, 'fmt' in q), verified).type('application/ld+json;profile="https://w3id.org/did-resolution"');
    } catch (e) {
      if (!(e instanceof ResolutionFailure)) throw e;
      const body: ResolutionResult = {
        '@context': DID_RESOLUTION_CONTEXT,
        didDocument: null,
        didResolutionMetadata: { error: e.error, errorMessage: e.message },
        didDocumentMetadata: {},
      };
      return sendJson(reply, ERROR_STATUS[e.error], jsonText(body, false)).header('x-quire-error', e.error);
    }
  };
  app.get(
    '/1.0/identifiers/*',
    {
      schema: {
        tags: ['did'],
        summary: 'DID resolution (Universal Resolver driver format) of did:indy:<namespace>:<id> and did:sov:<id>; ?versionId=<seqNo>, ?versionTime=<ISO 8601>',
        querystring: {
          type: 'object',
          properties: { versionId: { type: 'string', maxLength: 32 }, versionTime: { type: 'string', maxLength: 64 }, fmt: { type: 'string' } },
        },
      },
    },
    handler,
  );
}
