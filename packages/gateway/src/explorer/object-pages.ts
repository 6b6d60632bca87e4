// Pages of ledger objects: a DID (its resolved did:indy document, its NYM versions walked back in time with the
// verkey rotations and role changes, its endpoint ATTRIB), a schema, a credential definition, the transaction author
// agreement with its acceptance mechanisms, and the search that leads to them. Every value is a verified read.
import {
  buildGetAcceptanceMechanismsRequest,
  buildGetAttribRequest,
  buildGetCredDefRequest,
  buildGetNymRequest,
  buildGetSchemaRequest,
  buildGetTxnAuthorAgreementRequest,
} from '@quire/client';
import { isPlainObject, isValidDid } from '@quire/common';
import { parseCredDefId, parseDid, parseSchemaId } from '../ids.js';
import { parseJsonField } from '../json.js';
import { ResolutionFailure, resolveDid } from '../resolver.js';
import { didLink, roleName, txnLink, txnParts, typeName } from './cards.js';
import type { ExplorerData, Json, VerifiedTxn } from './data.js';
import { type Html, enc, facts, html, isoTime, rawJson, verifiedBadge } from './html.js';
import type { IndexStatus } from './search-index.js';

/** A page that has nothing to show: rendered with status 404. */
// internal control flow, never seen by a caller: the explorer's route renders it as its 404 page
export class NotOnLedger extends Error {
  constructor(readonly what: string) {
    super(what);
  }
}

/** NYM versions walked back at most this far. */
export const MAX_NYM_VERSIONS = 25;

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const v_ = (verified: boolean): 'proof' | 'consensus' => (verified ? 'proof' : 'consensus');

interface NymVersion {
  seqNo: number | undefined;
  txnTime: number | undefined;
  verkey: string | null | undefined;
  role: unknown;
  identifier: string | undefined;
  verified: 'proof' | 'consensus';
}

/** The NYM as it was after each write to it, newest first: GET_NYM at the time just before each version's txn. */
async function nymVersions(data: ExplorerData, dest: string): Promise<NymVersion[]> {
  const out: NymVersion[] = [];
  let at: number | undefined;
  for (let i = 0; i < MAX_NYM_VERSIONS; i++) {
    const r = await data.caller.read(buildGetNymRequest({ dest, ...(at !== undefined ? { timestamp: at } : {}) }));
    const d = parseJsonField(r.result.data);
    if (!isPlainObject(d)) break;
    const txnTime = num(d.txnTime) ?? num(r.result.txnTime);
    out.push({
      seqNo: num(d.seqNo) ?? num(r.result.seqNo),
      txnTime,
      verkey: d.verkey as string | null | undefined,
      role: d.role,
      identifier: str(d.identifier),
      verified: v_(r.verified),
    });
    if (txnTime === undefined || txnTime <= 1) break;
    at = txnTime - 1;
  }
  return out;
}

export async function didPage(data: ExplorerData, namespace: string, didText: string): Promise<{ title: string; body: Html }> {
  const parsed = parseDid(didText, 'did');
  const qualified = parsed.method === 'unqualified' ? `did:indy:${namespace}:${parsed.id}` : didText;
  // the history walk, the resolution and the endpoint ATTRIB are independent reads: made at once
  const [versions, resolved, attr] = await Promise.all([
    nymVersions(data, parsed.id),
    resolveDid(data.caller, namespace, qualified).catch((e: unknown) => (e instanceof ResolutionFailure ? e : Promise.reject(e))),
    data.caller.read(buildGetAttribRequest({ dest: parsed.id, raw: 'endpoint' })),
  ]);
  if (versions.length === 0) throw new NotOnLedger(`DID ${didText} is not on the ledger`);
  const current = versions[0];
  const doc =
    resolved instanceof ResolutionFailure
      ? html`<p class="note">No DID document: ${resolved.message}</p>`
      : html`<p>${verifiedBadge(resolved.verified)}</p><pre id="did-document">${JSON.stringify(resolved.result.didDocument, null, 2)}</pre>${rawJson(resolved.result, 'Resolution result (metadata)')}`;
  const endpoint = parseJsonField(attr.result.data);
  const rows = versions.map((v, i) => {
    const older = versions[i + 1];
    const changes: string[] = [];
    if (older === undefined) changes.push('created');
    else {
      if (older.verkey !== v.verkey) changes.push(v.verkey === null ? 'deactivated (verkey removed)' : 'verkey rotated');
      if (String(older.role ?? '') !== String(v.role ?? '')) changes.push(`role ${roleName(older.role)} → ${roleName(v.role)}`);
      if (changes.length === 0) changes.push('updated');
    }
    return html`<tr><td>${v.seqNo !== undefined ? txnLink('domain', v.seqNo) : '—'}</td><td>${isoTime(v.txnTime)}</td><td>${changes.join(', ')}</td><td class="mono">${v.verkey ?? 'none'}</td><td>${roleName(v.role)}</td><td>${verifiedBadge(v.verified)}</td></tr>`;
  });
  const more = versions.length >= MAX_NYM_VERSIONS ? html`<p class="muted">Only the newest ${MAX_NYM_VERSIONS} versions are shown.</p>` : '';
  return {
    title: `DID ${parsed.id}`,
    body: html`<h1>DID <span class="mono">${parsed.id}</span></h1>
${facts([
  ['did:indy', html`<span class="mono">did:indy:${namespace}:${parsed.id}</span>`],
  ['role', roleName(current.role)],
  ['verkey', current.verkey === null ? 'none (deactivated)' : html`<span class="mono">${current.verkey ?? ''}</span>`],
  ['created by', didLink(current.identifier)],
  ['last written', current.seqNo !== undefined ? html`${txnLink('domain', current.seqNo)} at ${isoTime(current.txnTime)}` : undefined],
  [
    'endpoint ATTRIB',
    isPlainObject(endpoint)
      ? html`<span class="mono">${JSON.stringify(endpoint.endpoint ?? endpoint)}</span> ${attr.result.seqNo !== undefined && attr.result.seqNo !== null ? txnLink('domain', Number(attr.result.seqNo)) : ''}`
      : 'none',
  ],
  [
    'resolve',
    html`<a href="/1.0/identifiers/${enc(`did:indy:${namespace}:${parsed.id}`)}">resolution result (JSON)</a> · <a href="/nym/${enc(parsed.id)}?fmt">GET_NYM reply</a>`,
  ],
])}
<h2>DID document</h2>${doc}
<h2>NYM history</h2><p class="muted">Each version read with GET_NYM as of the second before the next newer one (two writes in the same second show as one).</p>
<div class="table-wrap"><table><thead><tr><th scope="col">txn</th><th scope="col">time</th><th scope="col">change</th><th scope="col">verkey</th><th scope="col">role</th><th scope="col">verified</th></tr></thead><tbody>${rows}</tbody></table></div>${more}`,
  };
}

export async function schemaPage(data: ExplorerData, id: string): Promise<{ title: string; body: Html }> {
  const s = parseSchemaId(id, 'schemaId');
  const r = await data.caller.read(buildGetSchemaRequest({ dest: s.dest, name: s.name, version: s.version }));
  const d = obj(parseJsonField(r.result.data));
  const seqNo = num(r.result.seqNo);
  if (seqNo === undefined || !Array.isArray(d.attr_names)) throw new NotOnLedger(`schema ${id} is not on the ledger`);
  return {
    title: `Schema ${s.name} ${s.version}`,
    body: html`<h1>Schema ${s.name} <span class="muted">${s.version}</span></h1><p>${verifiedBadge(v_(r.verified))}</p>
${facts([
  ['id', html`<span class="mono">${s.dest}:2:${s.name}:${s.version}</span>`],
  ['issuer', didLink(s.dest)],
  ['attributes', html`<ul>${d.attr_names.map((a) => html`<li>${String(a)}</li>`)}</ul>`],
  ['txn', txnLink('domain', seqNo)],
  ['written', isoTime(r.result.txnTime)],
  ['credential definitions', html`<a href="/ledger/domain?type=CLAIM_DEF">CLAIM_DEF txns</a> (a cred def names this schema by txn #${seqNo})`],
])}${rawJson(r.result, 'GET_SCHEMA reply')}`,
  };
}

export async function credDefPage(data: ExplorerData, id: string): Promise<{ title: string; body: Html }> {
  const c = parseCredDefId(id, 'credDefId');
  const r = await data.caller.read(buildGetCredDefRequest({ origin: c.origin, ref: c.ref, signatureType: c.signatureType, tag: c.tag }));
  const d = parseJsonField(r.result.data);
  const seqNo = num(r.result.seqNo);
  if (!isPlainObject(d) || seqNo === undefined) throw new NotOnLedger(`credential definition ${id} is not on the ledger`);
  const primary = obj(d.primary);
  return {
    title: `Credential definition ${c.tag}`,
    body: html`<h1>Credential definition <span class="mono">${c.tag}</span></h1><p>${verifiedBadge(v_(r.verified))}</p>
${facts([
  ['id', html`<span class="mono">${c.origin}:3:${c.signatureType}:${c.ref}:${c.tag}</span>`],
  ['issuer', didLink(c.origin)],
  ['schema txn', txnLink('domain', c.ref)],
  ['signature type', c.signatureType],
  ['attributes (keys)', Object.keys(obj(primary.r)).join(', ') || undefined],
  ['revocation', isPlainObject(d.revocation) ? 'supported' : 'not supported'],
  ['txn', txnLink('domain', seqNo)],
  ['written', isoTime(r.result.txnTime)],
])}${rawJson(r.result, 'GET_CLAIM_DEF reply')}`,
  };
}

export async function agreementPage(data: ExplorerData): Promise<{ title: string; body: Html }> {
  const [t, a] = await Promise.all([data.caller.read(buildGetTxnAuthorAgreementRequest()), data.caller.read(buildGetAcceptanceMechanismsRequest())]);
  const taa = parseJsonField(t.result.data);
  const aml = parseJsonField(a.result.data);
  const taaSeqNo = num(t.result.seqNo);
  const taaBody =
    isPlainObject(taa) && str(taa.text) !== ''
      ? html`${facts([
          ['version', str(taa.version)],
          ['digest', html`<span class="mono">${str(taa.digest) ?? ''}</span>`],
          ['ratified', isoTime(taa.ratification_ts)],
          ['retired', taa.retirement_ts !== undefined ? isoTime(taa.retirement_ts) : undefined],
          ['txn', taaSeqNo !== undefined ? txnLink('config', taaSeqNo) : undefined],
        ])}<h3>Text</h3><pre id="taa-text">${str(taa.text) ?? ''}</pre>`
      : html`<p>No transaction author agreement is in force: writes need no acceptance.</p>`;
  const mechanisms = isPlainObject(aml) ? obj(aml.aml) : {};
  const amlBody = isPlainObject(aml)
    ? html`${facts([
        ['version', str(aml.version)],
        ['context', str(aml.amlContext)],
      ])}<div class="table-wrap"><table><thead><tr><th scope="col">mechanism</th><th scope="col">description</th></tr></thead><tbody>${Object.entries(mechanisms).map(([k, v]) => html`<tr><td class="mono">${k}</td><td>${String(v)}</td></tr>`)}</tbody></table></div>`
    : html`<p>No acceptance mechanisms are on the ledger.</p>`;
  return {
    title: 'Transaction author agreement',
    body: html`<h1>Transaction author agreement</h1><p>${verifiedBadge(v_(t.verified))}</p>${taaBody}
<h2>Acceptance mechanisms</h2><p>${verifiedBadge(v_(a.verified))}</p>${amlBody}`,
  };
}

/** Where a search text leads directly (a DID, a schema or cred def id, a seqNo), if anywhere. */
export async function directHit(data: ExplorerData, q: string): Promise<string | undefined> {
  if (/^[1-9][0-9]{0,15}$/.test(q)) return `/ledger/domain/${q}`;
  if (/^(pool|domain|config):[1-9][0-9]{0,15}$/.test(q)) return `/ledger/${q.replace(':', '/')}`;
  if (/^[^:]+:2:[^:]+:[^:]+$/.test(q) || q.includes('/anoncreds/v0/SCHEMA/')) return `/schemas/${enc(q)}`;
  if (/^[^:]+:3:[^:]+:[0-9]+(:[^:]+)?$/.test(q) || q.includes('/anoncreds/v0/CLAIM_DEF/')) return `/cred-defs/${enc(q)}`;
  let dest: string | undefined;
  try {
    dest = q.startsWith('did:') || isValidDid(q) ? parseDid(q, 'q').id : undefined;
  } catch {
    dest = undefined;
  }
  if (dest === undefined) return undefined;
  const r = await data.caller.read(buildGetNymRequest({ dest }));
  return isPlainObject(parseJsonField(r.result.data)) ? `/dids/${enc(q)}` : undefined;
}

/** What a txn matches in a text search: the NYM alias or DID, the schema name, the txnId, the author. */
export function matches(t: VerifiedTxn, needle: string): string | undefined {
  const p = txnParts(t);
  const lc = needle.toLowerCase();
  const has = (v: unknown): boolean => typeof v === 'string' && v.toLowerCase().includes(lc);
  if (has(p.txnId)) return 'txnId';
  if (has(p.data.alias)) return 'alias';
  if (has(obj(p.data.data).alias)) return 'alias';
  if (has(obj(p.data.data).name)) return 'schema name';
  if (has(p.data.dest)) return 'DID';
  if (has(p.from)) return 'author';
  return undefined;
}

/** What a search looked through: the txns read directly (the newest), the indexed range, the index's state. */
export interface SearchCoverage {
  size: number;
  tail: { from: number; to: number } | undefined;
  indexed: { from: number; to: number } | undefined;
  index: IndexStatus | undefined;
  /** More matches than shown. */
  more: boolean;
}

/** How many of the ledger's txns a search covered, and the sentence that says so. */
export function coverageOf(c: SearchCoverage): { searched: number; text: string } {
  const tailN = c.tail === undefined ? 0 : c.tail.to - c.tail.from + 1;
  const idxN = c.indexed === undefined ? 0 : Math.max(0, c.indexed.to - c.indexed.from + 1);
  const searched = Math.min(c.size, tailN + idxN);
  const parts: string[] = [];
  if (c.indexed !== undefined && idxN > 0) parts.push(`seqNo ${c.indexed.from} to ${c.indexed.to} by the search index`);
  if (c.tail !== undefined) parts.push(`seqNo ${c.tail.from} to ${c.tail.to} read now`);
  let text = searched >= c.size ? `all ${c.size} domain txns` : `${searched} of ${c.size} domain txns`;
  if (parts.length > 0 && c.size > 0) text += ` (${parts.join(', ')})`;
  const st = c.index;
  if (st === undefined) text += '; the search index is off, so only the newest txns are read';
  else if (searched < c.size) {
    if (st.floor > 1 && st.count > 0 && st.from <= st.floor) text += `; the search index keeps the newest ${st.count} txns (its configured bound)`;
    else if (st.running) text += `; the search index is still being built (${st.count} of ${c.size} txns read)`;
    else text += '; the search index is not running (a listening gateway builds it)';
    if (st.error !== undefined) text += `, its last read failed: ${st.error}`;
  }
  return { searched, text };
}

export function searchResults(q: string, hits: { t: VerifiedTxn; on: string }[], c: SearchCoverage): Html {
  const { searched, text } = coverageOf(c);
  return html`<h1>Search: “${q}”</h1><p data-searched="${searched}" data-size="${c.size}">${hits.length}${c.more ? '+' : ''} match${hits.length === 1 ? '' : 'es'} in ${text}. DIDs, schema ids, cred def ids and seqNos are looked up directly in the whole ledger; in indexed txns a txnId or DID is found by its exact value, an alias or schema name by any part of it.</p>
${c.more ? html`<p class="note">Only the newest ${hits.length} matches are shown: make the search more precise.</p>` : ''}
<div class="table-wrap"><table><thead><tr><th scope="col">txn</th><th scope="col">type</th><th scope="col">matched on</th><th scope="col">author</th><th scope="col">time</th></tr></thead><tbody>${hits.map(
    ({ t, on }) => {
      const p = txnParts(t);
      return html`<tr><td>${txnLink('domain', t.seqNo)}</td><td>${typeName(p.type)}</td><td>${on}</td><td>${didLink(p.from) ?? '—'}</td><td>${isoTime(p.time)}</td></tr>`;
    },
  )}</tbody></table></div>`;
}
