// The devnet's "register a DID" form (as von-network's): a DID from a seed, or a verkey (and optionally the DID), with
// a chosen role and alias, written as a NYM signed by the devnet's trustee. Off unless the gateway is told to serve it
// (the devnet does); never for a pool whose trustee key the gateway should not hold.
import { ClientError, DidKey, buildNymRequest, signRequest } from '@quire/client';
import { Role, b58decode, b58encode, isValidDid } from '@quire/common';
import { GatewayError, GatewayErrorCode, invalidParameter } from '../errors.js';
import { PoolRefusal, type PoolCaller } from '../pool-call.js';
import { didLink, roleName, txnLink } from './cards.js';
import { type Html, html } from './html.js';

/** Form fields longer than this are refused (a seed is 32 characters or 64 hex digits, a verkey 44). */
const MAX_FIELD = 256;
/** The body of the form is at most this large. */
export const MAX_FORM_BYTES = 4096;

export interface RegisterInput {
  seed: string;
  did: string;
  verkey: string;
  alias: string;
  role: string;
}

/** A form field the NYM cannot be made of (INVALID_PARAMETER, shown on the form's page). */
function fieldError(field: string, reason: string): GatewayError {
  return invalidParameter(field, reason);
}

/** The urlencoded body of the form. */
export function parseForm(body: unknown): RegisterInput {
  const bytes = body instanceof Uint8Array ? body : typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array();
  if (bytes.length > MAX_FORM_BYTES) throw new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: 'form', reason: `larger than ${MAX_FORM_BYTES} bytes` });
  const p = new URLSearchParams(new TextDecoder().decode(bytes));
  const get = (k: string): string => {
    const v = (p.get(k) ?? '').trim();
    if (v.length > MAX_FIELD) throw new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: k, reason: `longer than ${MAX_FIELD} characters` });
    return v;
  };
  return { seed: get('seed'), did: get('did'), verkey: get('verkey'), alias: get('alias'), role: get('role') };
}

const ROLES: [string, string][] = [
  ['', 'none (identity owner)'],
  ['ENDORSER', 'ENDORSER'],
  ['NETWORK_MONITOR', 'NETWORK_MONITOR'],
  ['STEWARD', 'STEWARD'],
  ['TRUSTEE', 'TRUSTEE'],
];

/** The NYM fields of a form: DID and verkey from the seed, or the verkey (and the DID, else the verkey's first 16 bytes). */
export function nymOfForm(i: RegisterInput): { dest: string; verkey: string; role: string | null; alias: string | undefined } {
  let dest: string;
  let verkey: string;
  if (i.seed !== '') {
    if (i.verkey !== '') throw fieldError('verkey', 'give a seed or a verkey, not both');
    let key: DidKey;
    try {
      key = DidKey.fromSeed(i.seed);
    } catch (e) {
      throw fieldError('seed', e instanceof ClientError ? String(e.data.reason ?? e.message) : 'not a seed (32 characters or 64 hex digits)');
    }
    dest = i.did !== '' ? i.did : key.did;
    verkey = i.did !== '' ? key.fullVerkey : key.verkey;
  } else if (i.verkey !== '') {
    verkey = i.verkey;
    if (i.did !== '') dest = i.did;
    else {
      let bytes: Uint8Array;
      try {
        bytes = b58decode(verkey);
      } catch {
        throw fieldError('verkey', 'not base58');
      }
      if (bytes.length !== 32) throw fieldError('verkey', 'a full verkey (base58 of 32 bytes) is needed without a DID');
      dest = b58encode(bytes.subarray(0, 16));
    }
  } else {
    throw fieldError('seed', 'a seed or a verkey is required');
  }
  if (!isValidDid(dest)) throw fieldError('did', 'not a DID (base58 of 16 or 32 bytes)');
  const role = i.role === '' ? null : (Role as Record<string, string>)[i.role];
  if (role === undefined) throw fieldError('role', `one of ${ROLES.map(([k]) => k || 'none').join(', ')} expected`);
  return { dest, verkey, role, alias: i.alias === '' ? undefined : i.alias };
}

export function registerForm(i: Partial<RegisterInput> = {}, message?: Html): Html {
  return html`<h1>Register a DID</h1>
<p class="note">Devnet only: the NYM is written and signed by the devnet’s trustee. Give a seed (the DID and verkey are derived from it) or a verkey (and a DID, else it is derived from a full verkey).</p>
${message ?? ''}
<form class="form" method="post" action="/register">
<label for="seed">Seed (32 characters or 64 hex digits)<input id="seed" name="seed" autocomplete="off" maxlength="${MAX_FIELD}" value="${i.seed ?? ''}"></label>
<label for="did">DID (optional)<input id="did" name="did" autocomplete="off" maxlength="${MAX_FIELD}" value="${i.did ?? ''}"></label>
<label for="verkey">Verkey (instead of a seed)<input id="verkey" name="verkey" autocomplete="off" maxlength="${MAX_FIELD}" value="${i.verkey ?? ''}"></label>
<label for="alias">Alias (optional)<input id="alias" name="alias" maxlength="${MAX_FIELD}" value="${i.alias ?? ''}"></label>
<label for="role">Role<select id="role" name="role">${ROLES.map(([k, label]) => html`<option value="${k}"${k === (i.role ?? '') ? html` selected` : ''}>${label}</option>`)}</select></label>
<button type="submit">Register</button>
</form>`;
}

/** Writes the NYM; the page shows the result or the reason it was refused. */
export async function register(caller: PoolCaller, trustee: DidKey, input: RegisterInput): Promise<{ status: number; body: Html }> {
  let nym: ReturnType<typeof nymOfForm>;
  try {
    nym = nymOfForm(input);
  } catch (e) {
    if (!(e instanceof GatewayError) || e.code !== GatewayErrorCode.INVALID_PARAMETER) throw e;
    return {
      status: 400,
      body: registerForm(input, html`<p class="error" role="alert" data-code="${e.code}">${String(e.data.field)}: ${String(e.data.reason)}</p>`),
    };
  }
  try {
    const req = signRequest(
      buildNymRequest({ submitter: trustee.did, dest: nym.dest, verkey: nym.verkey, role: nym.role, ...(nym.alias !== undefined ? { alias: nym.alias } : {}) }),
      trustee,
    );
    const out = await caller.write(req);
    const meta = out.result.txnMetadata as Record<string, unknown> | undefined;
    const seqNo = typeof meta?.seqNo === 'number' ? meta.seqNo : undefined;
    const msg = html`<div class="note" role="status" id="register-result"><p>Registered ${didLink(nym.dest)} (${roleName(nym.role)}) in ${seqNo !== undefined ? txnLink('domain', seqNo, `txn #${seqNo}`) : 'the domain ledger'}, agreed by ${out.nodes.length} validators.</p>
<dl class="facts"><dt>DID</dt><dd class="mono" data-did="${nym.dest}">${nym.dest}</dd><dt>verkey</dt><dd class="mono">${nym.verkey}</dd><dt>seqNo</dt><dd data-seqno="${seqNo ?? ''}">${seqNo ?? '?'}</dd></dl></div>`;
    return { status: 200, body: registerForm({}, msg) };
  } catch (e) {
    if (e instanceof PoolRefusal)
      return { status: 400, body: registerForm(input, html`<p class="error" role="alert" data-code="${e.code}">The pool refused the NYM: ${e.message}</p>`) };
    if (e instanceof GatewayError)
      return { status: e.status, body: registerForm(input, html`<p class="error" role="alert" data-code="${e.code}">${String(e.body().reason)}</p>`) };
    throw e;
  }
}
