// Ledger pages: /ledger/{name} lists txns newest first (or from any seqNo: ?from=N), with a filter by txn type
// (?type=NYM, repeatable); /ledger/{name}/{seqNo} shows one txn with how it was verified (its audit path against the
// ledger root of the size the node proved, that root signed by a BLS multi-signature of n-f validators).
import { LedgerId } from '@quire/common';
import { LEDGER_TYPES, TXN_TYPE_NAMES, txnCard, typeName } from './cards.js';
import type { ExplorerData, LedgerName, VerifiedTxn } from './data.js';
import { type Html, enc, facts, html, isoTime, verifiedBadge } from './html.js';

export const LEDGER_IDS: Readonly<Record<LedgerName, number>> = {
  pool: LedgerId.POOL,
  domain: LedgerId.DOMAIN,
  config: LedgerId.CONFIG,
  audit: LedgerId.AUDIT,
};

/** Txns per page, and the most a filtered page scans before it stops and offers to go on. */
export const PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
export const SCAN_LIMIT = 500;

/** Type names (or codes) of a `type` query for a ledger; unknown ones are reported. */
export function parseTypes(lid: number, q: unknown): { types: Set<string> | undefined; unknown: string[] } {
  const list = (Array.isArray(q) ? q : q === undefined ? [] : [q])
    .map(String)
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 0) return { types: undefined, unknown: [] };
  const allowed = new Set(LEDGER_TYPES[lid] ?? []);
  const types = new Set<string>();
  const unknown: string[] = [];
  for (const s of list.slice(0, 20)) {
    const code = TXN_TYPE_NAMES[s] !== undefined ? s : Object.entries(TXN_TYPE_NAMES).find(([, n]) => n === s.toUpperCase())?.[0];
    if (code !== undefined && allowed.has(code)) types.add(code);
    else unknown.push(s.slice(0, 40));
  }
  return { types: types.size > 0 ? types : undefined, unknown };
}

function filterForm(ledger: LedgerName, lid: number, types: Set<string> | undefined, from: number | undefined): Html {
  const opts = (LEDGER_TYPES[lid] ?? []).map(
    (code) => html`<option value="${typeName(code)}"${types?.has(code) === true ? html` selected` : ''}>${typeName(code)}</option>`,
  );
  return html`<form class="filters" method="get" action="/ledger/${ledger}">
<label for="type">Transaction type<select id="type" name="type"><option value="">all types</option>${opts}</select></label>
<label for="from">From seqNo (newest first)<input id="from" name="from" type="number" min="1" inputmode="numeric" value="${from ?? ''}" placeholder="newest"></label>
<button type="submit">Show</button></form>`;
}

export async function ledgerList(
  data: ExplorerData,
  ledger: LedgerName,
  o: { from?: number; count: number; types?: Set<string>; unknown: string[] },
): Promise<{ title: string; body: Html }> {
  const lid = LEDGER_IDS[ledger];
  const title = `${ledger[0].toUpperCase()}${ledger.slice(1)} ledger`;
  const p = await data.page(lid, {
    ...(o.from !== undefined ? { from: o.from } : {}),
    count: o.count,
    ...(o.types !== undefined ? { types: o.types } : {}),
    scanLimit: o.types === undefined ? o.count : SCAN_LIMIT,
  });
  const typeQ = o.types === undefined ? '' : [...o.types].map((t) => `&type=${enc(typeName(t))}`).join('');
  const countQ = o.count !== PAGE_SIZE ? `&count=${o.count}` : '';
  const link = (from: number, label: string, rel?: string): Html =>
    html`<a href="/ledger/${ledger}?from=${from}${typeQ}${countQ}"${rel !== undefined ? html` rel="${rel}"` : ''}>${label}</a>`;
  const newer = p.from < p.size ? link(Math.min(p.size, p.from + o.count), '← Newer', 'prev') : undefined;
  const older = p.next !== undefined ? link(p.next, 'Older →', 'next') : undefined;
  const pager = html`<nav class="pager" aria-label="Pages">${html`<a href="/ledger/${ledger}${typeQ !== '' || countQ !== '' ? `?${(typeQ + countQ).slice(1)}` : ''}">Newest</a>`}${newer ?? ''}${older ?? ''}${p.size > 0 ? link(Math.min(p.size, o.count), 'Oldest (seqNo 1)') : ''}</nav>`;
  const range = p.items.length === 0 ? 'no txns' : `seqNo ${p.items[0].seqNo} to ${p.items[p.items.length - 1].seqNo}`;
  const scanNote =
    o.types !== undefined && p.scanned >= SCAN_LIMIT && p.items.length < o.count
      ? html`<p class="note">Scanned ${p.scanned} txns for this filter; continue with “Older”.</p>`
      : '';
  return {
    title,
    body: html`<h1>${title}</h1>
<p>${p.size} txns · showing ${range}${o.types !== undefined ? html` of type ${[...o.types].map(typeName).join(', ')}` : ''}</p>
${lid === LedgerId.AUDIT ? html`<p class="note">One audit txn per ordered batch: the view and batch number, every ledger’s size and the roots the batch wrote, the primaries. ${AUDIT_CONSENSUS}</p>` : ''}
${o.unknown.length > 0 ? html`<p class="error" role="alert">Unknown type for this ledger: ${o.unknown.join(', ')}</p>` : ''}
${filterForm(ledger, lid, o.types, o.from)}${pager}${scanNote}
<ol class="cards" reversed>${p.items.map((t) => txnCard(t, ledger))}</ol>${p.items.length > 5 ? pager : ''}`,
  };
}

/**
 * Why an audit txn is shown as agreed rather than proven: as in Indy, the validators answer GET_TXN on the audit ledger
 * with the txn and its audit path but no multi-signature (they sign each batch's ledger and state roots, which the audit
 * txn records, never the audit ledger's own root), so only f+1 matching replies vouch for it.
 */
export const AUDIT_CONSENSUS =
  'The validators sign the ledger and state roots each audit txn records, not the audit ledger’s own root, so an audit txn comes without a multi-signature (as in Indy): it is shown when f+1 validators gave the same answer.';

/** One txn with its verification. */
export function txnDetail(t: VerifiedTxn, ledger: LedgerName, size: number | undefined): Html {
  const ms = t.multiSignature;
  const verification = facts([
    ['how', verifiedBadge(t.verified)],
    [
      'audit path',
      t.verified === 'proof'
        ? html`<span class="badge ok" data-audit-path="verified">verified</span> ${t.auditPathLength} hashes from txn ${t.seqNo} to the root of a ledger of ${t.ledgerSize ?? '?'} txns`
        : 'not proven (answer agreed by f+1 validators)',
    ],
    ['why', t.verified === 'consensus' && t.ledgerId === LedgerId.AUDIT ? AUDIT_CONSENSUS : undefined],
    ['ledger root', t.rootHash === undefined ? undefined : html`<span class="mono">${t.rootHash}</span>`],
    ['multi-signature', ms === undefined ? undefined : `${ms.participants.length} validators (${ms.participants.join(', ')}), signed ${isoTime(ms.timestamp)}`],
    ['answered by', t.nodes.join(', ')],
  ]);
  const prev = t.seqNo > 1 ? html`<a href="/ledger/${ledger}/${t.seqNo - 1}" rel="prev">← #${t.seqNo - 1}</a>` : '';
  const next = size === undefined || t.seqNo < size ? html`<a href="/ledger/${ledger}/${t.seqNo + 1}" rel="next">#${t.seqNo + 1} →</a>` : '';
  return html`<h1>${ledger} ledger · txn #${t.seqNo}</h1>
<nav class="pager" aria-label="Txns">${prev}${next}<a href="/ledger/${ledger}?from=${t.seqNo}">in the list</a><a href="/txn/${ledger}/${t.seqNo}?fmt">as JSON</a></nav>
<ol class="cards" aria-label="Transaction">${txnCard(t, ledger)}</ol>
<h2>Verification</h2>${verification}`;
}
