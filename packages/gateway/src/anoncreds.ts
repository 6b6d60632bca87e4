// The AnonCreds registry over HTTP, as the npm package credo-ts-indy-vdr-proxy-client calls it (its resolver and
// registry take a base URL, here `<gateway>/anoncreds`): GET /did/{did}, /schema/{schemaId},
// /credential-definition/{credDefId}, /revocation-registry-definition/{id}, /revocation-status-list/{id}/{timestamp},
// answered with the objects of Credo's AnonCreds types (GetSchemaReturn, GetCredentialDefinitionReturn, ...) built as
// Credo's indy-vdr registry builds them, for legacy Indy and did:indy identifiers. Every ledger read is verified.
// Objects the ledger does not hold are 200 with `resolutionMetadata.error: 'notFound'` (as Credo's registry answers);
// malformed ids are 400 INVALID_PARAMETER.
import type { FastifyInstance } from 'fastify';
import { buildGetCredDefRequest, buildGetRevocRegDefRequest, buildGetRevocRegDeltaRequest, buildGetSchemaRequest, buildGetTxnRequest } from '@quire/client';
import { LedgerId, TxnType, isPlainObject, type Request } from '@quire/common';
import { sendValue, type Verified } from './http.js';
import { parseCredDefId, parseRevRegDefId, parseSchemaId, parsePositive } from './ids.js';
import { parseJsonField } from './json.js';
import { ResolutionFailure, resolveDid } from './resolver.js';
import type { RouteContext } from './vdr-routes.js';

type Json = Record<string, unknown>;

/** Reads verified by proof unless one of them was only verified by f+1 agreement. */
class Reads {
  verified: Verified = 'proof';
  constructor(private readonly ctx: RouteContext) {}
  async result(request: Request): Promise<Json> {
    const out = await this.ctx.caller.read(request);
    if (!out.verified) this.verified = 'consensus';
    return out.result;
  }
}

const issuerIdOf = (dest: string, namespace: string | undefined): string => (namespace !== undefined ? `did:indy:${namespace}:${dest}` : dest);

const notFound = (message: string): Json => ({ error: 'notFound', message });

export function registerAnonCredsRoutes(app: FastifyInstance, ctx: RouteContext, prefix = '/anoncreds'): void {
  const ID = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 1024 } } };
  const tags = ['anoncreds'];

  app.get(
    `${prefix}/did/:id`,
    { schema: { tags, summary: 'DID resolution result (Credo DidResolutionResult); a legacy DID is resolved as did:sov', params: ID } },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const did = /^[a-zA-Z0-9]{21,22}$/.test(id) ? `did:sov:${id}` : id;
      try {
        const { result, verified } = await resolveDid(ctx.caller, ctx.namespace, did);
        return sendValue(
          req,
          reply,
          { didDocument: result.didDocument, didDocumentMetadata: result.didDocumentMetadata, didResolutionMetadata: result.didResolutionMetadata },
          verified,
        );
      } catch (e) {
        if (!(e instanceof ResolutionFailure)) throw e;
        return sendValue(req, reply, { didDocument: null, didDocumentMetadata: {}, didResolutionMetadata: { error: e.error, message: e.message } }, 'none');
      }
    },
  );

  app.get(`${prefix}/schema/:id`, { schema: { tags, summary: 'GetSchemaReturn', params: ID } }, async (req, reply) => {
    const schemaId = (req.params as { id: string }).id;
    const s = parseSchemaId(schemaId, 'schemaId');
    const reads = new Reads(ctx);
    const r = await reads.result(buildGetSchemaRequest({ dest: s.dest, name: s.name, version: s.version }));
    const data = r.data as Json | null;
    if (!isPlainObject(data) || !Array.isArray(data.attr_names) || typeof r.seqNo !== 'number') {
      return sendValue(req, reply, { schemaId, resolutionMetadata: notFound(`unable to find schema with id ${schemaId}`), schemaMetadata: {} }, reads.verified);
    }
    return sendValue(
      req,
      reply,
      {
        schema: { attrNames: data.attr_names, name: s.name, version: s.version, issuerId: issuerIdOf(s.dest, s.namespace) },
        schemaId,
        resolutionMetadata: {},
        schemaMetadata: { didIndyNamespace: ctx.namespace, indyLedgerSeqNo: r.seqNo },
      },
      reads.verified,
    );
  });

  app.get(`${prefix}/credential-definition/:id`, { schema: { tags, summary: 'GetCredentialDefinitionReturn', params: ID } }, async (req, reply) => {
    const credentialDefinitionId = (req.params as { id: string }).id;
    const c = parseCredDefId(credentialDefinitionId, 'credentialDefinitionId');
    const reads = new Reads(ctx);
    const r = await reads.result(buildGetCredDefRequest({ origin: c.origin, ref: c.ref, signatureType: c.signatureType, tag: c.tag }));
    const missing = (why: string): unknown =>
      sendValue(req, reply, { credentialDefinitionId, credentialDefinitionMetadata: {}, resolutionMetadata: notFound(why) }, reads.verified);
    if (!isPlainObject(r.data)) return missing(`unable to find credential definition with id ${credentialDefinitionId}`);
    // the schema id, from the schema txn the definition refers to (as Credo's registry finds it)
    const txn = await reads.result(buildGetTxnRequest({ ledgerId: LedgerId.DOMAIN, seqNo: c.ref }));
    const schemaTxn = isPlainObject(txn.data) ? (txn.data as Json) : undefined;
    const inner = schemaTxn !== undefined && isPlainObject(schemaTxn.txn) ? (schemaTxn.txn as Json) : undefined;
    const payload = inner !== undefined && isPlainObject(inner.data) ? (inner.data as Json) : undefined;
    const sd = payload !== undefined && isPlainObject(payload.data) ? (payload.data as Json) : payload;
    const from = inner !== undefined && isPlainObject(inner.metadata) ? (inner.metadata as Json).from : undefined;
    if (inner?.type !== TxnType.SCHEMA || sd === undefined || typeof sd.name !== 'string' || typeof sd.version !== 'string' || typeof from !== 'string')
      return missing(`no schema at seqNo ${c.ref}`);
    const schemaId =
      c.namespace !== undefined ? `did:indy:${c.namespace}:${from}/anoncreds/v0/SCHEMA/${sd.name}/${sd.version}` : `${from}:2:${sd.name}:${sd.version}`;
    return sendValue(
      req,
      reply,
      {
        credentialDefinitionId,
        credentialDefinition: {
          issuerId: issuerIdOf(c.origin, c.namespace),
          schemaId,
          tag: typeof r.tag === 'string' ? r.tag : c.tag,
          type: 'CL',
          value: r.data,
        },
        credentialDefinitionMetadata: { didIndyNamespace: ctx.namespace },
        resolutionMetadata: {},
      },
      reads.verified,
    );
  });

  /** The definition as Credo's types shape it, or undefined when the ledger has none. */
  async function revRegDef(reads: Reads, id: string): Promise<{ def: Json; issuanceType: string | undefined } | undefined> {
    const p = parseRevRegDefId(id, 'revocationRegistryDefinitionId');
    const r = await reads.result(buildGetRevocRegDefRequest({ id: p.id }));
    const data = r.data as Json | null;
    if (!isPlainObject(data) || !isPlainObject(data.value)) return undefined;
    const v = data.value as Json;
    const credDefId =
      p.namespace !== undefined
        ? `did:indy:${p.namespace}:${p.credDefId.origin}/anoncreds/v0/CLAIM_DEF/${p.credDefId.ref}/${p.credDefId.tag}`
        : String(data.credDefId ?? p.credDefIdText);
    return {
      def: {
        issuerId: issuerIdOf(p.issuer, p.namespace),
        revocDefType: data.revocDefType,
        value: { maxCredNum: v.maxCredNum, tailsHash: v.tailsHash, tailsLocation: v.tailsLocation, publicKeys: v.publicKeys },
        tag: data.tag ?? p.tag,
        credDefId,
      },
      issuanceType: typeof v.issuanceType === 'string' ? v.issuanceType : undefined,
    };
  }

  app.get(
    `${prefix}/revocation-registry-definition/:id`,
    { schema: { tags, summary: 'GetRevocationRegistryDefinitionReturn', params: ID } },
    async (req, reply) => {
      const revocationRegistryDefinitionId = (req.params as { id: string }).id;
      const reads = new Reads(ctx);
      const d = await revRegDef(reads, revocationRegistryDefinitionId);
      if (d === undefined) {
        return sendValue(
          req,
          reply,
          {
            revocationRegistryDefinitionId,
            revocationRegistryDefinitionMetadata: {},
            resolutionMetadata: notFound(`unable to find revocation registry definition ${revocationRegistryDefinitionId}`),
          },
          reads.verified,
        );
      }
      return sendValue(
        req,
        reply,
        {
          revocationRegistryDefinitionId,
          revocationRegistryDefinition: d.def,
          revocationRegistryDefinitionMetadata: { issuanceType: d.issuanceType, didIndyNamespace: ctx.namespace },
          resolutionMetadata: {},
        },
        reads.verified,
      );
    },
  );

  app.get(
    `${prefix}/revocation-status-list/:id/:timestamp`,
    {
      schema: {
        tags,
        summary: 'GetRevocationStatusListReturn at a time (seconds): the list computed from GET_REVOC_REG_DELTA up to it, by issuance type',
        params: {
          type: 'object',
          required: ['id', 'timestamp'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 1024 }, timestamp: { type: 'string', maxLength: 16 } },
        },
      },
    },
    async (req, reply) => {
      const { id, timestamp } = req.params as { id: string; timestamp: string };
      const to = parsePositive(timestamp, 'timestamp', 0);
      const reads = new Reads(ctx);
      const d = await revRegDef(reads, id);
      const failed = (message: string): unknown =>
        sendValue(req, reply, { resolutionMetadata: notFound(message), revocationStatusListMetadata: {} }, reads.verified);
      if (d === undefined) return failed(`unable to find revocation registry definition ${id}`);
      const legacyId = parseRevRegDefId(id, 'revocationRegistryDefinitionId').id;
      const r = await reads.result(buildGetRevocRegDeltaRequest({ revocRegDefId: legacyId, to }));
      const data = r.data as Json | null;
      const value = isPlainObject(data) && isPlainObject(data.value) ? (data.value as Json) : undefined;
      const accumTo = value !== undefined && isPlainObject(value.accum_to) ? (value.accum_to as Json) : undefined;
      if (value === undefined || accumTo === undefined)
        return failed(
          `Error retrieving revocation registry delta '${id}' from ledger, potentially revocation interval ends before revocation registry creation`,
        );
      const accumValue = isPlainObject(accumTo.value) ? (accumTo.value as Json) : {};
      const maxCredNum = Number((d.def.value as Json).maxCredNum);
      if (!Number.isSafeInteger(maxCredNum) || maxCredNum < 0 || maxCredNum > 1_000_000)
        return failed(`maxCredNum ${String((d.def.value as Json).maxCredNum)} out of range`);
      // Credo's anonCredsRevocationStatusListFromIndyVdr: the default state by issuance type, then issued and revoked
      const revocationList: number[] = new Array<number>(maxCredNum).fill(d.issuanceType === 'ISSUANCE_ON_DEMAND' ? 1 : 0);
      const at = (i: unknown): number | undefined => (typeof i === 'number' && Number.isSafeInteger(i) && i >= 0 && i < maxCredNum ? i : undefined);
      for (const i of Array.isArray(value.issued) ? value.issued : []) {
        const k = at(i);
        if (k !== undefined) revocationList[k] = 0;
      }
      for (const i of Array.isArray(value.revoked) ? value.revoked : []) {
        const k = at(i);
        if (k !== undefined) revocationList[k] = 1;
      }
      const txnTime = typeof accumTo.txnTime === 'number' ? accumTo.txnTime : r.txnTime;
      return sendValue(
        req,
        reply,
        {
          resolutionMetadata: {},
          revocationStatusList: {
            issuerId: d.def.issuerId,
            currentAccumulator: accumValue.accum ?? parseJsonField(accumValue.accum),
            revRegDefId: id,
            revocationList,
            timestamp: txnTime,
          },
          revocationStatusListMetadata: { didIndyNamespace: ctx.namespace },
        },
        reads.verified,
      );
    },
  );
}
