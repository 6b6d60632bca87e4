// The explorer's HTML: escaping, the page shell (one small inline style sheet, no external asset of any kind, so the
// page works offline and behind any firewall), and the small pieces every page shares. Everything a caller or the
// ledger supplies goes through esc() before it reaches the page.

/** Text or attribute value, escaped for HTML. */
export function esc(v: unknown): string {
  return String(v ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A path segment or query value. */
export const enc = encodeURIComponent;

/** HTML that has already been escaped (the result of html`` and the helpers below). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function part(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Part[]).map(part).join('');
  return esc(v);
}

/** Template tag: interpolated values are escaped unless they are Html. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1];
  return new Html(out);
}

export const raw = (s: string): Html => new Html(s);

/** Seconds since the epoch as an ISO time (UTC), or a dash. */
export function isoTime(t: unknown): string {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return '—';
  const d = new Date(t * 1000);
  return Number.isNaN(d.getTime()) ? '—' : d.toISOString().replace('.000Z', 'Z');
}

/** A duration in seconds as '3 s', '4 min 2 s', '2 h 5 min', '3 d 4 h'. */
export function duration(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) return '—';
  const s = Math.floor(sec);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** How a shown value was verified, as a badge. */
export function verifiedBadge(v: 'proof' | 'consensus' | 'none', title?: string): Html {
  const text = v === 'proof' ? 'verified: state proof + BLS multi-signature' : v === 'consensus' ? 'verified: f+1 matching replies' : 'not verified (local)';
  return html`<span class="badge ${v}" title="${title ?? text}">${text}</span>`;
}

export interface Shell {
  title: string;
  /** The nav entry to mark as current. */
  current?: string;
  /** Show the devnet's "register a DID" entry. */
  register?: boolean;
  /** Search box prefilled. */
  query?: string;
  /** A small inline script (the pool page's polling); none by default. */
  script?: string;
}

const CSS = `
:root{--fg:#1b1f24;--muted:#4a5360;--bg:#fff;--line:#d0d7de;--accent:#0b57d0;--ok:#0a6b2f;--warn:#8a4b00;--bad:#a4161a;--card:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}a:focus,button:focus,input:focus,select:focus,summary:focus{outline:3px solid #f6b400;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
header{background:#102a43;color:#fff;padding:8px 16px;display:flex;flex-wrap:wrap;gap:8px 20px;align-items:center}
header a{color:#fff}header .brand{font-weight:700;text-decoration:none;font-size:1.1em}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a[aria-current=page]{font-weight:700;text-decoration:underline 3px}
header form{margin-left:auto;display:flex;gap:4px}
header input{min-width:14em;max-width:60vw;padding:4px 6px;border:1px solid #829ab1;border-radius:4px}
header button{padding:4px 10px;border-radius:4px;border:1px solid #fff;background:#243b53;color:#fff;cursor:pointer}
main{padding:12px 16px;max-width:1200px;margin:0 auto}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.2em;margin:1.2em 0 .4em}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
pre{background:var(--card);border:1px solid var(--line);padding:8px;overflow:auto;max-height:40em;white-space:pre-wrap}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{background:var(--card)}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.85em;border:1px solid}
.badge.proof,.badge.ok{color:var(--ok);border-color:var(--ok)}.badge.consensus,.badge.warn{color:var(--warn);border-color:var(--warn)}
.badge.none,.badge.bad{color:var(--bad);border-color:var(--bad)}
.cards{display:grid;gap:10px;padding:0;list-style:none}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:#fff}
.card h3{font-size:1em;margin:0 0 4px;display:flex;flex-wrap:wrap;gap:4px 12px;align-items:baseline}
.card dl,.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
.muted{color:var(--muted)}.pager{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;margin:12px 0}
.filters{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:end;margin:8px 0}
.filters label,.form label{display:flex;flex-direction:column;font-size:.9em}
.form{display:grid;gap:10px;max-width:36em}
.form input,.form select,.filters input,.filters select{padding:6px;border:1px solid #57606a;border-radius:4px;font:inherit}
.form button,.filters button{padding:6px 14px;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;font:inherit;cursor:pointer;justify-self:start}
.error{border-left:4px solid var(--bad);padding:4px 12px;background:#fff5f5}
.note{border-left:4px solid var(--accent);padding:4px 12px;background:#f3f7ff}
footer{padding:12px 16px;color:var(--muted);font-size:.85em;border-top:1px solid var(--line);margin-top:24px}
@media (max-width:600px){header form{margin-left:0;width:100%}header input{flex:1;min-width:0}th,td{padding:4px}.card dl,.facts{grid-template-columns:1fr}dt{font-weight:600}}
`;

const NAV: [string, string, string][] = [
  ['pool', '/pool', 'Pool'],
  ['domain', '/ledger/domain', 'Domain ledger'],
  ['pool-ledger', '/ledger/pool', 'Pool ledger'],
  ['config', '/ledger/config', 'Config ledger'],
  ['audit', '/ledger/audit', 'Audit ledger'],
  ['agreement', '/agreement', 'Agreement'],
  ['genesis', '/genesis', 'Genesis'],
];

/** The whole page around a body. */
export function page(s: Shell, body: Html): string {
  const items = [...NAV, ...(s.register === true ? [['register', '/register', 'Register a DID'] as [string, string, string]] : [])];
  const nav = items.map(
    ([k, href, label]) =>
      html`<li><a href="${href}"${k === s.current ? raw(' aria-current="page"') : ''}${k === 'genesis' ? raw(' download="genesis.txn"') : ''}>${label}</a></li>`,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${s.title} · Quire explorer</title><style>${raw(CSS)}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/pool">Quire explorer</a>
<nav aria-label="Main"><ul>${nav}</ul></nav>
<form role="search" action="/search" method="get"><label for="q" class="skip">Search the ledger</label><input id="q" name="q" type="search" placeholder="DID, alias, schema name, txnId, seqNo" value="${s.query ?? ''}" aria-label="Search by DID, alias, schema name, txnId or seqNo"><button type="submit">Search</button></form>
</header>
<main id="main" tabindex="-1">${body}</main>
<footer>Every value on these pages was read through the Quire SDK and verified (state proof and BLS multi-signature of n−f validators, an audit path, or f+1 matching replies) before it was shown; each says which. <a href="/docs">HTTP API</a></footer>
${s.script !== undefined ? raw(`<script>${s.script}</script>`) : ''}
</body></html>`.text;
}

/** A definition list from label/value pairs (values undefined are left out). */
export function facts(rows: [string, Part][], cls = 'facts'): Html {
  return html`<dl class="${cls}">${rows.filter(([, v]) => v !== undefined).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

/** Raw JSON behind a disclosure (keyboard: Enter/Space on the summary). */
export function rawJson(value: unknown, label = 'Raw JSON'): Html {
  return html`<details><summary>${label}</summary><pre>${JSON.stringify(value, bigintSafe, 2)}</pre></details>`;
}

function bigintSafe(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}
