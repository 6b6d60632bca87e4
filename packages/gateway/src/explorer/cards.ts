// A ledger txn as a readable card: its type name, author, endorser, time, and the fields that matter for its type
// (NYM: the DID, its key and role; SCHEMA: name, version and attributes; CLAIM_DEF: its schema and tag; NODE: the
// validator's addresses and services...), with the raw JSON a click away. Links go to the explorer's own pages.
import { Role, TxnType, isPlainObject } from '@quire/common';
import type { Json, VerifiedTxn } from './data.js';
import { txnType } from './data.js';
import { type Html, enc, facts, html, isoTime, rawJson, verifiedBadge } from './html.js';

/** Type code -> name ('1' -> 'NYM'). */
export const TXN_TYPE_NAMES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(TxnType).map(([name, code]) => [code, name]));

export const ROLE_NAMES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(Role).map(([name, code]) => [code, name]));

/** The write types of each ledger, for the type filter. */
export const LEDGER_TYPES: Readonly<Record<number, readonly string[]>> = {
  0: [TxnType.NODE],
  1: [
    TxnType.NYM,
    TxnType.ATTRIB,
    TxnType.SCHEMA,
    TxnType.CLAIM_DEF,
    TxnType.REVOC_REG_DEF,
    TxnType.REVOC_REG_ENTRY,
    TxnType.JSON_LD_CONTEXT,
    TxnType.RICH_SCHEMA,
    TxnType.RICH_SCHEMA_ENCODING,
    TxnType.RICH_SCHEMA_MAPPING,
    TxnType.RICH_SCHEMA_CRED_DEF,
    TxnType.RICH_SCHEMA_PRES_DEF,
  ],
  2: [
    TxnType.TXN_AUTHOR_AGREEMENT,
    TxnType.TXN_AUTHOR_AGREEMENT_AML,
    TxnType.TXN_AUTHOR_AGREEMENT_DISABLE,
    TxnType.AUTH_RULE,
    TxnType.AUTH_RULES,
    TxnType.POOL_UPGRADE,
    TxnType.NODE_UPGRADE,
    TxnType.POOL_CONFIG,
    TxnType.LEDGERS_FREEZE,
    TxnType.FLAG,
  ],
  3: [TxnType.AUDIT],
};

export const typeName = (code: string): string => TXN_TYPE_NAMES[code] ?? `type ${code}`;

export function roleName(role: unknown): string {
  if (role === null || role === undefined || role === '') return 'identity owner (no role)';
  return ROLE_NAMES[String(role)] ?? `role ${String(role)}`;
}

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : undefined);

/** Parts of a ledger entry every type has. */
export function txnParts(t: VerifiedTxn): {
  txn: Json;
  data: Json;
  meta: Json;
  txnMeta: Json;
  type: string;
  from: string | undefined;
  endorser: string | undefined;
  time: number | undefined;
  txnId: string | undefined;
} {
  const txn = obj(t.entry.txn);
  const meta = obj(txn.metadata);
  const txnMeta = obj(t.entry.txnMetadata);
  return {
    txn,
    data: obj(txn.data),
    meta,
    txnMeta,
    type: txnType(t),
    from: str(meta.from),
    endorser: str(meta.endorser),
    time: typeof txnMeta.txnTime === 'number' ? txnMeta.txnTime : undefined,
    txnId: str(txnMeta.txnId),
  };
}

export const didLink = (did: string | undefined): Html | undefined =>
  did === undefined ? undefined : html`<a class="mono" href="/dids/${enc(did)}">${did}</a>`;
export const txnLink = (ledger: string, seqNo: number, label?: string): Html => html`<a href="/ledger/${ledger}/${seqNo}">${label ?? `#${seqNo}`}</a>`;

/** The fields that matter for a txn's type. */
export function typeFields(t: VerifiedTxn): [string, Html | string | undefined][] {
  const { data, from, type } = txnParts(t);
  switch (type) {
    case TxnType.NYM:
      return [
        ['DID', didLink(str(data.dest))],
        ['verkey', data.verkey === null ? 'none (deactivated)' : str(data.verkey)],
        ['role', data.role === undefined ? undefined : roleName(data.role)],
        ['alias', str(data.alias)],
        ['DID document content', data.diddocContent === undefined ? undefined : 'yes (diddocContent)'],
      ];
    case TxnType.ATTRIB: {
      const kind = typeof data.raw === 'string' ? 'raw' : typeof data.hash === 'string' ? 'hash' : typeof data.enc === 'string' ? 'enc' : undefined;
      let names: string | undefined;
      if (kind === 'raw') {
        try {
          const v = JSON.parse(data.raw as string) as unknown;
          names = isPlainObject(v) ? Object.keys(v).join(', ') : undefined;
        } catch {
          names = undefined;
        }
      }
      return [
        ['DID', didLink(str(data.dest))],
        ['attribute', kind === undefined ? undefined : `${kind}${names !== undefined ? `: ${names}` : ''}`],
        ['hash', kind === 'hash' ? str(data.hash) : undefined],
      ];
    }
    case TxnType.SCHEMA: {
      const d = obj(data.data);
      const name = str(d.name);
      const version = str(d.version);
      const id = from !== undefined && name !== undefined && version !== undefined ? `${from}:2:${name}:${version}` : undefined;
      return [
        ['schema', id === undefined ? undefined : html`<a class="mono" href="/schemas/${enc(id)}">${id}</a>`],
        ['name', name],
        ['version', version],
        ['attributes', Array.isArray(d.attr_names) ? d.attr_names.map(String).join(', ') : undefined],
      ];
    }
    case TxnType.CLAIM_DEF: {
      const ref = str(data.ref);
      const sig = str(data.signature_type) ?? 'CL';
      const tag = str(data.tag) ?? 'tag';
      const id = from !== undefined && ref !== undefined ? `${from}:3:${sig}:${ref}:${tag}` : undefined;
      return [
        ['credential definition', id === undefined ? undefined : html`<a class="mono" href="/cred-defs/${enc(id)}">${id}</a>`],
        ['schema txn', ref === undefined ? undefined : txnLink('domain', Number(ref))],
        ['signature type', sig],
        ['tag', tag],
        ['revocation', isPlainObject(obj(data.data).revocation) ? 'supported' : 'no'],
      ];
    }
    case TxnType.REVOC_REG_DEF: {
      const v = obj(data.value);
      const cd = str(data.credDefId);
      return [
        ['registry', str(data.id)],
        ['credential definition', cd === undefined ? undefined : html`<a class="mono" href="/cred-defs/${enc(cd)}">${cd}</a>`],
        ['tag', str(data.tag)],
        ['issuance', str(v.issuanceType)],
        ['capacity', str(v.maxCredNum)],
      ];
    }
    case TxnType.REVOC_REG_ENTRY: {
      const v = obj(data.value);
      return [
        ['registry', str(data.revocRegDefId)],
        [
          'revoked',
          Array.isArray(v.revoked) ? `${v.revoked.length} (${v.revoked.slice(0, 20).map(String).join(', ')}${v.revoked.length > 20 ? ', …' : ''})` : undefined,
        ],
        ['issued', Array.isArray(v.issued) ? String(v.issued.length) : undefined],
      ];
    }
    case TxnType.NODE: {
      const d = obj(data.data);
      return [
        ['alias', str(d.alias)],
        ['node key (dest)', str(data.dest)],
        ['node address', d.node_ip !== undefined ? `${str(d.node_ip)}:${str(d.node_port)}` : undefined],
        ['client address', d.client_ip !== undefined ? `${str(d.client_ip)}:${str(d.client_port)}` : undefined],
        ['services', Array.isArray(d.services) ? (d.services.length === 0 ? 'none (demoted)' : d.services.map(String).join(', ')) : undefined],
        ['BLS key', d.blskey !== undefined ? 'set' : undefined],
      ];
    }
    case TxnType.TXN_AUTHOR_AGREEMENT: {
      const text = str(data.text);
      return [
        ['version', str(data.version)],
        ['text', text === undefined ? undefined : text.length > 200 ? `${text.slice(0, 200)}…` : text],
        ['ratified', data.ratification_ts !== undefined ? isoTime(data.ratification_ts) : undefined],
        ['retired', data.retirement_ts !== undefined ? isoTime(data.retirement_ts) : undefined],
      ];
    }
    case TxnType.TXN_AUTHOR_AGREEMENT_AML:
      return [
        ['version', str(data.version)],
        ['mechanisms', Object.keys(obj(data.aml)).join(', ')],
      ];
    case TxnType.AUDIT:
      return auditFields(t.seqNo, data);
    default: {
      const keys = Object.keys(data).filter((k) => k !== 'type');
      return keys.length === 0 ? [] : [['fields', keys.join(', ')]];
    }
  }
}

const LEDGER_NAMES_BY_ID: Readonly<Record<string, string>> = { '0': 'pool', '1': 'domain', '2': 'config' };
const ledgerNameOf = (id: string): string => LEDGER_NAMES_BY_ID[id] ?? `ledger ${id}`;

/**
 * An audit txn (formats.md 10.1): the batch it records (view, ppSeqNo, digest, the ledger it wrote), every ledger's size
 * after it (each linked to that ledger from that size down), the roots it recorded, and the primaries and validators,
 * which are a list or a delta: “unchanged since audit txn #k”.
 */
function auditFields(seqNo: number, data: Json): [string, Html | string | undefined][] {
  const sizes = obj(data.ledgerSize);
  const roots = obj(data.ledgerRoot);
  const written = Object.keys(obj(data.stateRoot));
  const digest = str(data.digest);
  const listOrDelta = (v: unknown): Html | string | undefined => {
    if (Array.isArray(v)) return v.map(String).join(', ');
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v < seqNo) return html`unchanged since ${txnLink('audit', seqNo - v)}`;
    return str(v);
  };
  return [
    ['view / batch', `${str(data.viewNo) ?? '?'} / ${str(data.ppSeqNo) ?? '?'}`],
    ['batch for', written.length === 0 ? undefined : written.map(ledgerNameOf).join(', ')],
    [
      'ledger sizes',
      Object.keys(sizes).length === 0
        ? undefined
        : html`${Object.entries(sizes).map(([id, n], i) => {
            const size = typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
            const name = ledgerNameOf(id);
            return html`${i > 0 ? ' · ' : ''}${name} ${size !== undefined && size > 0 && LEDGER_NAMES_BY_ID[id] !== undefined ? html`<a href="/ledger/${name}?from=${size}">${size}</a>` : String(n)}`;
          })}`,
    ],
    [
      'roots recorded',
      written.length === 0
        ? undefined
        : html`${written.map((id, i) => html`${i > 0 ? html`<br>` : ''}${ledgerNameOf(id)}: txn root <span class="mono">${str(roots[id]) ?? '?'}</span>`)}`,
    ],
    ['primaries', listOrDelta(data.primaries)],
    ['validators', data.nodeReg === undefined ? undefined : listOrDelta(data.nodeReg)],
    ['batch digest', digest === undefined ? undefined : html`<span class="mono">${digest}</span>`],
  ];
}

/** One txn as a card (a list item). */
export function txnCard(t: VerifiedTxn, ledger: string): Html {
  const p = txnParts(t);
  const rows: [string, Html | string | undefined][] = [
    ['author', didLink(p.from)],
    ['endorser', didLink(p.endorser)],
    ['time', p.time === undefined ? 'genesis' : isoTime(p.time)],
    ...typeFields(t),
    ['txnId', p.txnId],
  ];
  return html`<li class="card" data-seqno="${t.seqNo}" data-type="${p.type}"><h3><span>${txnLink(ledger, t.seqNo)}</span><span>${typeName(p.type)}</span>${verifiedBadge(t.verified)}</h3>${facts(rows)}${rawJson(t.entry)}</li>`;
}
