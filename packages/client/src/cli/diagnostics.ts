/**
 * What `quire` says when something goes wrong: one first line that names the failure (the pool's reason verbatim, with
 * its code, or "no quorum: X of N answered, Q needed"), then hint lines where the pool's own text says nothing useful.
 * Also: reads that found nothing, an interrupted write, and closed output pipes.
 */
import { readFileSync } from 'node:fs';
import { isPlainObject, QuireError, TxnType } from '@quire/common';
import { ClientErrorCode } from '../errors.js';

/** The version of @quire/client (its package.json, two levels above both src/cli and dist/cli). */
export function cliVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Exit statuses of `quire` (documented in docs/cli.md). */
export const ExitCode = {
  OK: 0,
  /** a failure: refused, no quorum, bad input, or a read that found nothing */
  FAILED: 1,
  /** interrupted by SIGINT (128 + 2, as shells report it) */
  INTERRUPTED: 130,
} as const;

/**
 * Ends a command with an exit status after it printed everything itself (a read that found nothing, a pool status
 * without quorum, an interrupted write): no further error line is printed.
 */
// internal control flow, never seen by a caller: main() turns it into the exit status (what the user sees was printed)
export class CliExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/** The size of the pool a failure concerns, for "X of N answered, Q needed". */
export interface PoolShape {
  n: number;
  f: number;
}

/** The parts of a pool reason built by `client request invalid: <Kind>('<identifier>', <reqId>, '<text>')`. */
export interface WrappedReason {
  kind: string;
  text: string;
}

/** Splits Indy's wrapped reason (requests.md §1.8); undefined when the reason is not wrapped that way. */
export function unwrapReason(reason: string): WrappedReason | undefined {
  const m = /^client request invalid: (\w+)\((['"])[^'"]*\2, [^,]*, (['"])([\s\S]*)\3\)$/.exec(reason);
  return m === null ? undefined : { kind: m[1], text: m[4] };
}

/**
 * A hint for a refusal whose Indy text does not say what happened, by the request's type and the reason. The text
 * of the pool is kept as it is (clients and scripts match on it); the hint is printed on its own line after it.
 */
export function reasonHint(requestType: string | undefined, reason: string): string | undefined {
  const w = unwrapReason(reason);
  const text = w?.text ?? reason;
  if (requestType === TxnType.SCHEMA && text === 'The action is forbidden')
    return 'a schema with this name and version already exists for this DID (a schema cannot be changed: publish a new version)';
  if (requestType === TxnType.NYM && w?.kind === 'UnauthorizedClientRequest' && text === '')
    return "only the DID's owner may change it without changing its role or verkey (its alias or DID document); a trustee may change only its role";
  if (w?.kind === 'UnauthorizedClientRequest' && text === '') return 'the pool gave no reason text: the author is not allowed to make this change';
  if (reason === '') return 'the pool gave no reason text';
  if (/^sender's DID \S+ is not found in the Ledger$/.test(text))
    return 'the signing DID is not on this ledger: write its NYM first (by a trustee, steward or endorser)';
  if (/(transaction|txn) author agreement|TAA/i.test(text) && /missing|required|not accepted/i.test(text))
    return 'accept the agreement: add --taa-mechanism <label> once (see quire get-taa and get-taa-aml); later writes to this pool carry it';
  return undefined;
}

interface NodeFailureLike {
  node?: unknown;
  code?: unknown;
  reason?: unknown;
}

function failures(data: Record<string, unknown>): NodeFailureLike[] {
  return Array.isArray(data.errors) ? (data.errors as unknown[]).filter(isPlainObject) : [];
}

function failureText(f: NodeFailureLike): string {
  return `${String(f.node)}: ${String(f.code)}${typeof f.reason === 'string' && f.reason !== '' ? ` (${f.reason})` : ''}`;
}

/**
 * "no quorum: X of N answered, Q needed" for a write that got no f+1 agreement; a write is ordered by n-f nodes.
 * Who answered: the nodes `data.answered` names when the submission says; after the deadline (`timedOut`) every node
 * that did not fail (it took the request in and waited with it); when the submission gave up before the deadline
 * (no agreement possible any more) the nodes that gave a final answer. Undefined when enough nodes answered (then
 * they disagreed).
 */
export function quorumLine(data: Record<string, unknown>, shape: PoolShape, kind: 'write' | 'read', timedOut = true): string | undefined {
  const failed = new Set(failures(data).map((f) => String(f.node)));
  const finalAnswers = new Set(
    (Array.isArray(data.replies) ? (data.replies as unknown[]).filter(isPlainObject) : []).flatMap((r) => (Array.isArray(r.nodes) ? r.nodes.map(String) : [])),
  );
  const answered = Array.isArray(data.answered) ? data.answered.length : timedOut ? Math.max(0, shape.n - failed.size) : finalAnswers.size;
  const needed = kind === 'write' ? shape.n - shape.f : 1;
  if (answered >= needed && kind === 'write') return undefined;
  return `no quorum: ${answered} of ${shape.n} answered, ${needed} needed`;
}

/** The lines that describe a failure: the first names it (as `error: ...`), the others detail it or give a hint. */
export function errorLines(e: unknown, context: { shape?: PoolShape; requestType?: string } = {}): string[] {
  if (!(e instanceof QuireError)) return [`error: ${e instanceof Error ? e.message : String(e)}`];
  const reason = typeof e.data.reason === 'string' ? e.data.reason : undefined;
  if (e.code === ClientErrorCode.REQUEST_NACKED || e.code === ClientErrorCode.REQUEST_REJECTED) {
    const text = reason ?? e.message;
    const code = typeof e.data.code === 'number' ? ` [code ${e.data.code}]` : '';
    const op = e.code === ClientErrorCode.REQUEST_NACKED ? 'REQNACK' : 'REJECT';
    const lines = [`error: request refused by the pool (${op}${code}): ${text === '' ? "''" : text}`];
    const hint = reasonHint(context.requestType, text);
    if (hint !== undefined) lines.push(`hint: ${hint}`);
    return lines;
  }
  if (e.code === ClientErrorCode.INVALID_ARGUMENT && typeof e.data.field === 'string' && reason !== undefined) return [`error: ${e.data.field}: ${reason}`];
  if (
    (e.code === ClientErrorCode.TIMEOUT || e.code === ClientErrorCode.NO_CONSENSUS) &&
    context.shape !== undefined &&
    (Array.isArray(e.data.errors) || Array.isArray(e.data.replies))
  ) {
    const first = quorumLine(e.data, context.shape, 'write', e.code === ClientErrorCode.TIMEOUT);
    const lines = [
      first !== undefined ? `error: ${first}` : `error: no agreement: the nodes answered but no ${context.shape.f + 1} of them gave the same answer`,
    ];
    for (const r of Array.isArray(e.data.replies) ? (e.data.replies as unknown[]).filter(isPlainObject) : []) {
      lines.push(`  ${String(r.kind)} from ${Array.isArray(r.nodes) ? r.nodes.join(', ') : '?'}${typeof r.reason === 'string' ? `: ${r.reason}` : ''}`);
    }
    for (const f of failures(e.data)) lines.push(`  ${failureText(f)}`);
    if (e.code === ClientErrorCode.TIMEOUT)
      lines.push(`hint: the write may still be committed if the pool recovers; check with a read (quire get-txn / get-nym) before sending it again`);
    return lines;
  }
  if (e.code === ClientErrorCode.NO_VERIFIED_REPLY && context.shape !== undefined) {
    const fs = failures(e.data);
    const lines = [
      `error: no verified reply: ${context.shape.n - new Set(fs.filter((f) => String(f.code) === ClientErrorCode.NODE_UNREACHABLE || String(f.code) === ClientErrorCode.TIMEOUT).map((f) => String(f.node))).size} of ${context.shape.n} answered, none with a reply that verifies`,
    ];
    for (const f of fs) lines.push(`  ${failureText(f)}`);
    return lines;
  }
  return [`error: ${e.message}`];
}

/** A read's result that says the object does not exist: no data, or (GET_SCHEMA) a data without attributes or seqNo. */
export function isNotFound(type: string | undefined, result: Record<string, unknown>, data: unknown): boolean {
  if (data === null || data === undefined) return true;
  if (type === TxnType.GET_SCHEMA) return result.seqNo === null || result.seqNo === undefined || !isPlainObject(data) || data.attr_names === undefined;
  if (type === TxnType.GET_CLAIM_DEF) return result.seqNo === null && isPlainObject(data) && Object.keys(data).length === 0;
  return false;
}

/** What a read looked for, in words ("schema 'name' version '1.0' by DID X"). */
export function readSubject(operation: Record<string, unknown>): string {
  const s = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? String(v) : JSON.stringify(v));
  const d = isPlainObject(operation.data) ? operation.data : {};
  switch (operation.type) {
    case TxnType.GET_NYM:
      return `DID ${s(operation.dest)}`;
    case TxnType.GET_ATTR:
      return `attribute ${s(operation.raw ?? operation.hash ?? operation.enc)} of DID ${s(operation.dest)}`;
    case TxnType.GET_SCHEMA:
      return `schema '${s(d.name)}' version '${s(d.version)}' by DID ${s(operation.dest)}`;
    case TxnType.GET_CLAIM_DEF:
      return `credential definition of schema ${s(operation.ref)} by DID ${s(operation.origin)}${operation.tag !== undefined ? ` tag '${s(operation.tag)}'` : ''}`;
    case TxnType.GET_TXN:
      return `transaction ${s(operation.data)} of ledger ${s(operation.ledgerId)}`;
    case TxnType.GET_REVOC_REG_DEF:
      return `revocation registry definition ${s(operation.id)}`;
    case TxnType.GET_TXN_AUTHOR_AGREEMENT:
      return 'transaction author agreement';
    case TxnType.GET_TXN_AUTHOR_AGREEMENT_AML:
      return 'acceptance mechanisms';
    default:
      return `object of type ${s(operation.type)}`;
  }
}

/** The read a user can run to see whether an interrupted write was committed, when the write names its object. */
export function checkCommand(operation: Record<string, unknown>, submitter: string): string | undefined {
  const data = isPlainObject(operation.data) ? operation.data : {};
  switch (operation.type) {
    case TxnType.NYM:
      return `quire get-nym --dest ${String(operation.dest)}`;
    case TxnType.ATTRIB:
      return `quire get-attrib --dest ${String(operation.dest)}${typeof operation.raw === 'string' ? ` --raw ${Object.keys(safeJson(operation.raw))[0] ?? '<name>'}` : ''}`;
    case TxnType.SCHEMA:
      return `quire get-schema --dest ${submitter} --name '${String(data.name)}' --version '${String(data.version)}'`;
    default:
      return undefined;
  }
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return isPlainObject(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * Resolves when the process gets SIGINT or SIGTERM, or `stop` aborts (tests); `release()` removes the handlers. While
 * it is installed, Ctrl-C does not kill the process: the command says what became of its request first.
 */
export function interruption(stop: AbortSignal | undefined): { promise: Promise<'interrupted'>; release: () => void } {
  let onSignal: () => void = () => undefined;
  const promise = new Promise<'interrupted'>((resolve) => {
    onSignal = () => resolve('interrupted');
  });
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  stop?.addEventListener('abort', onSignal, { once: true });
  if (stop?.aborted === true) onSignal();
  return {
    promise,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stop?.removeEventListener('abort', onSignal);
    },
  };
}

/**
 * Makes a closed stdout or stderr (`quire ... | head -1`) end the process quietly with exit 0: what the reader wanted
 * was printed, and a write was already committed before its outcome was printed.
 */
export function exitQuietlyOnClosedPipe(): void {
  if (closedPipeHandled) return;
  closedPipeHandled = true;
  for (const s of [process.stdout, process.stderr]) {
    s.prependListener('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') process.exit(0);
      // any other output error: the same as without this handler
      if (s.listenerCount('error') === 1) throw e;
    });
  }
}
let closedPipeHandled = false;
