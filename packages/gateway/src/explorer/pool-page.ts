// The pool page: every validator (alias, addresses, reachable, view, primary, last ordered batch, catch-up state,
// uptime, software version) from its own VALIDATOR_INFO, f and the quorums, the pool's read-only state, and the
// newest BLS multi-signature with its age. The live part is re-read every few seconds by a small inline script
// (GET /pool?part=live answers only that part), so the page works without any script too (it is just not live).
import { isPlainObject } from '@quire/common';
import type { ExplorerData, Json, MultiSignatureInfo, ValidatorInfo } from './data.js';
import { type Html, duration, facts, html, isoTime, rawJson, verifiedBadge } from './html.js';

/** Seconds between two refreshes of the live part. */
export const POOL_REFRESH_SECONDS = 5;

export const POOL_SCRIPT = `(function(){var live=document.getElementById('live');if(!live||!window.fetch)return;
function tick(){fetch('/pool?part=live',{headers:{accept:'text/html'}}).then(function(r){return r.ok?r.text():null}).then(function(t){if(t!==null){live.innerHTML=t;}}).catch(function(){var s=document.getElementById('live-status');if(s)s.textContent='refresh failed; retrying';}).finally(function(){setTimeout(tick,${POOL_REFRESH_SECONDS * 1000});});}
setTimeout(tick,${POOL_REFRESH_SECONDS * 1000});})();`;

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function multiSignatureBlock(ms: MultiSignatureInfo | undefined, nowSec: number): Html {
  if (ms === undefined) return html`<p class="muted">No multi-signature seen yet.</p>`;
  const age = ms.timestamp === undefined ? undefined : nowSec - ms.timestamp;
  return facts([
    [
      'signed at',
      html`${isoTime(ms.timestamp)}${age !== undefined ? html` <span class="badge ${age < 600 ? 'ok' : 'warn'}" data-age="${age}">${duration(age)} ago</span>` : ''}`,
    ],
    ['participants', `${ms.participants.length}: ${ms.participants.join(', ')}`],
    ['ledger', ms.ledgerId === undefined ? undefined : String(ms.ledgerId)],
    ['state root', ms.stateRoot === undefined ? undefined : html`<span class="mono">${ms.stateRoot}</span>`],
    ['txn root', ms.txnRoot === undefined ? undefined : html`<span class="mono">${ms.txnRoot}</span>`],
  ]);
}

interface Row {
  alias: string;
  primary: boolean;
  info: Json | undefined;
  error: string | undefined;
  connected: boolean;
  client: string | null;
}

function validatorRows(data: ExplorerData, infos: ValidatorInfo[] | undefined): Row[] {
  const st = data.pool.status();
  const byAlias = new Map((infos ?? []).map((i) => [i.alias, i]));
  // the primary as most validators see it
  const votes = new Map<string, number>();
  for (const i of infos ?? []) {
    const p = str(obj(i.info?.node).primary);
    if (p !== undefined) votes.set(p, (votes.get(p) ?? 0) + 1);
  }
  let primary: string | undefined;
  for (const [p, c] of votes) if (primary === undefined || c > (votes.get(primary) ?? 0)) primary = p;
  return st.validators.map((v) => {
    const i = byAlias.get(v.alias);
    return { alias: v.alias, primary: v.alias === primary, info: i?.info, error: i?.error, connected: v.connected, client: v.client };
  });
}

function validatorTable(rows: Row[], withInfo: boolean): Html {
  const head = withInfo
    ? html`<tr><th scope="col">Validator</th><th scope="col">Addresses</th><th scope="col">Reachable</th><th scope="col">View</th><th scope="col">Last ordered</th><th scope="col">State</th><th scope="col">Uptime</th><th scope="col">Version</th><th scope="col">Domain ledger</th></tr>`
    : html`<tr><th scope="col">Validator</th><th scope="col">Client address</th><th scope="col">Connected to the gateway</th></tr>`;
  const body = rows.map((r) => {
    const name = html`<th scope="row">${r.alias}${r.primary ? html` <span class="badge ok" data-primary="true">primary</span>` : ''}</th>`;
    const conn = r.connected ? html`<span class="badge ok">connected</span>` : html`<span class="badge bad">not connected</span>`;
    if (!withInfo) return html`<tr data-alias="${r.alias}">${name}<td class="mono">${r.client ?? '—'}</td><td>${conn}</td></tr>`;
    if (r.info === undefined)
      return html`<tr data-alias="${r.alias}">${name}<td class="mono">${r.client ?? '—'}</td><td>${conn}</td><td colspan="6"><span class="badge bad">no validator info</span> ${r.error ?? ''}</td></tr>`;
    const node = obj(r.info.node);
    const pool = obj(r.info.pool);
    const addr = obj(node.addresses);
    const a = (x: unknown): string => `${str(obj(x).ip) ?? '?'}:${num(obj(x).port) ?? '?'}`;
    const reach = obj(pool.reachable);
    const view = obj(node.view);
    const lo = obj(node.lastOrdered);
    const catchup = obj(node.catchup);
    const mode = str(node.mode) ?? '?';
    const dom = obj(obj(node.ledgers).domain);
    return html`<tr data-alias="${r.alias}">${name}<td class="mono">node ${a(addr.node)}<br>client ${a(addr.client)}</td>
<td>${conn}<br><span class="muted">sees ${num(reach.count) ?? '?'} of ${num(pool.n) ?? '?'}</span></td>
<td>${num(view.viewNo) ?? '?'}${view.waitingForNewView === true ? ' (view change)' : ''}</td>
<td>${num(lo.viewNo) ?? '?'}:${num(lo.ppSeqNo) ?? '?'}</td>
<td><span class="badge ${mode === 'participating' ? 'ok' : 'warn'}">${mode}</span>${catchup.catchingUp === true ? html`<br>catch-up round ${num(catchup.rounds) ?? '?'}` : ''}${catchup.lagging === true ? html`<br>lagging` : ''}</td>
<td>${duration(num(node.uptimeSec) ?? NaN)}</td><td>${str(obj(r.info.software).version) ?? '?'}</td><td>${num(dom.size) ?? '?'}</td></tr>`;
  });
  return html`<div class="table-wrap"><table><caption class="skip">Validators</caption><thead>${head}</thead><tbody>${body}</tbody></table></div>`;
}

/** The part of the pool page that is refreshed. */
export async function poolLive(data: ExplorerData, nowSec: number): Promise<Html> {
  const st = data.pool.status();
  let infos: ValidatorInfo[] | undefined;
  let infoError: string | undefined;
  const infoP = data.validatorInfo();
  // the newest multi-signature comes with the domain ledger's size (a verified GET_TXN)
  const [infoR] = await Promise.allSettled([infoP ?? Promise.resolve(undefined), data.size(1).catch(() => undefined)]);
  if (infoR.status === 'fulfilled') infos = infoR.value;
  else infoError = infoR.reason instanceof Error ? infoR.reason.message : String(infoR.reason);
  const rows = validatorRows(data, infos);
  const withInfo = infos !== undefined;
  const answered = (infos ?? []).filter((i) => i.info !== undefined);
  const readOnly = answered.filter((i) => obj(i.info?.pool).readOnly === true).length;
  const n = st.n;
  const f = st.f;
  const primary = rows.find((r) => r.primary)?.alias;
  const summary = facts([
    ['validators', `n = ${n}`],
    ['faults tolerated', `f = ${f}`],
    ['quorums', `f+1 = ${f + 1} (a reply), n−f = ${n - f} (ordering, multi-signature)`],
    ['primary', primary ?? (withInfo ? 'unknown' : undefined)],
    [
      'writes',
      withInfo
        ? answered.length === 0
          ? 'unknown'
          : readOnly > f
            ? html`<span class="badge bad">read-only (POOL_CONFIG writes=false)</span>`
            : html`<span class="badge ok">accepted</span>`
        : undefined,
    ],
    ['pool ledger', `${st.ledgerSize} txns, root ${st.root}`],
    ['demoted', st.demoted.length > 0 ? st.demoted.join(', ') : undefined],
  ]);
  return html`<p id="live-status" class="muted" aria-live="polite">Updated ${isoTime(nowSec)}${withInfo ? '' : ' — from the gateway’s own connections'}</p>
${!withInfo ? html`<p class="note">${infoError !== undefined ? html`Validator info could not be read: ${infoError}` : 'Validator info needs a trustee or steward key (the gateway’s explorer signer, set on the devnet); showing what the gateway’s SDK connections know.'}</p>` : ''}
<h2>Pool</h2>${summary}
<h2>Validators</h2>${validatorTable(rows, withInfo)}
<h2>Latest BLS multi-signature ${data.latestMultiSignature !== undefined ? verifiedBadge('proof', 'checked by the SDK against the pool’s BLS keys') : ''}</h2>${multiSignatureBlock(data.latestMultiSignature, nowSec)}
${withInfo ? html`<h2>Raw validator info</h2>${(infos ?? []).map((i) => rawJson(i.info ?? { error: i.error }, i.alias))}` : ''}`;
}
