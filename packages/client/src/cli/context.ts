/**
 * What every quire command shares: global options (--genesis, --json, keys, timeouts), opening the pool, turning
 * files and JSON arguments into values, signing and submitting, and printing results (human-readable by default,
 * the reply's result as lossless JSON with --json).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPlainObject, ledgerOfType, LedgerId, parseJson, stringifyJson, type Request } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';
import { appendTaaAcceptance, buildTaaAcceptance, fetchTaa } from '../requests/taa.js';
import { DidKey } from '../requests/did.js';
import { prepareForEndorser, signRequest } from '../requests/sign.js';
import { Pool, type ReadOutcome, type WriteOutcome } from '../pool/pool.js';
import { nodeFailure, type NodeAnswer } from '../pool/exchange.js';
import { checkCommand, CliExit, ExitCode, interruption, isNotFound, readSubject, type PoolShape } from './diagnostics.js';
import { acceptedTaa, profileGenesis, rememberTaa, walletKey, type AcceptedTaa } from './wallet.js';

export const GENESIS_ENV = 'QUIRE_GENESIS';
export const SEED_ENV = 'QUIRE_SEED';

export interface GlobalOptions {
  genesis?: string;
  json?: boolean;
  seed?: string;
  keyFile?: string;
  timeout?: string;
  freshness?: string;
  endorser?: string;
  taaMechanism?: string;
  dryRun?: boolean;
  refresh?: boolean;
}

/** Where output goes (tests capture it). */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export function usage(field: string, reason: string): ClientError {
  return new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field, reason }, `${field}: ${reason}`);
}

/** A JSON argument: inline JSON text, or `@path` to read it from a file. Lossless. */
export function jsonArg(v: string, field: string): unknown {
  const text = v.startsWith('@') ? readText(v.slice(1), field) : v;
  try {
    return parseJson(text);
  } catch (e) {
    throw usage(field, `not valid JSON (${(e as { code?: string }).code ?? 'parse error'})`);
  }
}

export function jsonObjectArg(v: string, field: string): Record<string, unknown> {
  const o = jsonArg(v, field);
  if (!isPlainObject(o)) throw usage(field, 'a JSON object is required');
  return o;
}

export function readText(path: string, field: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw usage(field, `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** A non-negative integer argument. */
export function intOf(v: string, field: string): number {
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v))) throw usage(field, 'a non-negative integer is required');
  return Number(v);
}

/** A non-negative integer option, undefined when it is absent. */
export function intArg(v: string | undefined, field: string): number | undefined {
  return v === undefined ? undefined : intOf(v, field);
}

/** An option's text: commander gives a string for an option with a value, true for a flag, undefined when absent. */
export const textArg = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A required option's text (commander refuses a command without it: this keeps the type honest). */
export function requiredArg(v: unknown, field: string): string {
  if (typeof v !== 'string') throw usage(field, 'required');
  return v;
}

/** `{ [key]: f(v) }` when the option was given with a value, else nothing: for spreading into builder options. */
export function given<K extends string, V>(key: K, v: unknown, f: (x: string) => V): { [P in K]?: V } {
  return (typeof v === 'string' ? { [key]: f(v) } : {}) as { [P in K]?: V };
}

export function listArg(v: string | undefined): string[] | undefined {
  return v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
}

/** The signing key: --seed, then --key-file (seed text or JSON {"seed"}), then $QUIRE_SEED; none is a usage error. */
export function loadKey(globals: GlobalOptions): DidKey;
/** The signing key, or undefined when none is given and `required` is false. */
export function loadKey(globals: GlobalOptions, required: boolean): DidKey | undefined;
export function loadKey(globals: GlobalOptions, required = true): DidKey | undefined {
  let seed = globals.seed;
  if (seed === undefined && globals.keyFile !== undefined) {
    const text = readText(globals.keyFile, '--key-file').trim();
    if (text.startsWith('{')) {
      const o = jsonObjectArg(text, '--key-file');
      if (typeof o.seed !== 'string') throw usage('--key-file', 'JSON key files need a "seed" string');
      seed = o.seed;
    } else seed = text;
  }
  seed ??= process.env[SEED_ENV];
  if (seed === undefined || seed === '') {
    if (required) throw usage('--seed', `a key is needed: --seed, --key-file or $${SEED_ENV}`);
    return undefined;
  }
  return DidKey.fromSeed(seed);
}

export class Context {
  private pool: Pool | undefined;
  /** the type of the last request sent (for hints on its refusal) */
  requestType: string | undefined;
  /** the command's positional arguments */
  args: unknown[] = [];

  constructor(
    readonly globals: GlobalOptions,
    readonly io: Output,
    /** ends a write as SIGINT does (tests) */
    readonly stop?: AbortSignal,
  ) {}

  /** n and f of the pool once opened (for "X of N answered, Q needed"). */
  shape(): PoolShape | undefined {
    return this.pool === undefined ? undefined : { n: this.pool.n, f: this.pool.f };
  }

  /** The pool genesis file: --genesis, then $QUIRE_GENESIS, then the pool profile in use. */
  genesisFile(): string {
    const env = process.env[GENESIS_ENV];
    const file = this.globals.genesis ?? (env !== undefined && env !== '' ? env : undefined) ?? profileGenesis();
    if (file === undefined)
      throw usage('--genesis', `a pool genesis file is needed (--genesis, $${GENESIS_ENV}, or a pool profile: quire pool add NAME --genesis FILE)`);
    return file;
  }

  async openPool(): Promise<Pool> {
    if (this.pool !== undefined) return this.pool;
    const file = this.genesisFile();
    const timeout = intArg(this.globals.timeout, '--timeout');
    const freshness = intArg(this.globals.freshness, '--freshness');
    this.pool = await Pool.open(file, {
      ...(timeout !== undefined ? { writeTimeoutMs: timeout, readTimeoutMs: timeout, actionTimeoutMs: timeout } : {}),
      ...(freshness !== undefined ? { freshnessSeconds: freshness } : {}),
    });
    if (this.globals.refresh === true) await this.pool.refresh();
    return this.pool;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** Signs (adding the TAA acceptance and endorser first when asked) and submits or prints a built write. */
  async write(build: (submitter: string) => Request): Promise<void> {
    const key = await this.signingKey();
    let req = build(key.did);
    const type = req.operation.type as string;
    // the agreement: accepted with --taa-mechanism (then remembered for this pool), or the one accepted before
    let accepted: AcceptedTaa | undefined;
    if (ledgerOfType(type) === LedgerId.DOMAIN) {
      const remembered = this.globals.taaMechanism === undefined ? this.rememberedTaa() : undefined;
      const mechanism = this.globals.taaMechanism ?? remembered?.mechanism;
      if (mechanism !== undefined) {
        const { taa, aml } = await fetchTaa(await this.openPool());
        if (taa === null) {
          if (this.globals.taaMechanism !== undefined) throw usage('--taa-mechanism', 'the ledger has no transaction author agreement in force');
        } else if (remembered !== undefined && remembered.digest !== taa.digest) {
          this.io.err(
            `note: the agreement in force (version ${taa.version}) is not the one accepted for this pool (version ${remembered.version}): accept it with --taa-mechanism <label>`,
          );
        } else {
          req = appendTaaAcceptance(req, buildTaaAcceptance({ text: taa.text, version: taa.version, mechanism, aml }));
          if (this.globals.taaMechanism !== undefined) accepted = { version: taa.version, digest: taa.digest, mechanism };
        }
      }
    }
    req = this.globals.endorser !== undefined ? prepareForEndorser(req, this.globals.endorser, key) : signRequest(req, key);
    if (this.globals.dryRun === true || this.globals.endorser !== undefined) {
      // an endorsed request goes to its endorser (quire sign, then quire submit); a dry run is only printed
      this.io.out(stringifyJson(req));
      return;
    }
    await this.send(req);
    // accepted once: later domain writes to this pool carry it without the flag
    if (accepted !== undefined) rememberTaa(this.genesisFile(), accepted);
  }

  /** The signing key: --seed, --key-file or $QUIRE_SEED; else the DID in use of the wallet in use. */
  async signingKey(): Promise<DidKey> {
    const key = loadKey(this.globals, false) ?? (await walletKey());
    if (key === undefined)
      throw usage('--seed', `a key is needed: --seed, --key-file, $${SEED_ENV}, or a wallet DID (quire wallet create, did new --alias, did use)`);
    return key;
  }

  private rememberedTaa(): AcceptedTaa | undefined {
    try {
      return acceptedTaa(this.genesisFile());
    } catch {
      return undefined;
    }
  }

  /** Submits a request by its kind and prints the outcome; `payload` sends bytes verbatim. */
  async send(req: Request, payload?: Uint8Array): Promise<void> {
    const pool = await this.openPool();
    const kind = Pool.kindOf(req);
    this.requestType = typeof req.operation.type === 'string' ? req.operation.type : undefined;
    if (kind === 'action') return this.printAction(await pool.submitAction(req, payload === undefined ? {} : { payload }));
    if (kind === 'read') return this.printRead(await pool.submitRead(req, payload === undefined ? {} : { payload }), req);
    const stop = interruption(this.stop);
    try {
      const outcome = await Promise.race([pool.submitWrite(req, payload === undefined ? {} : { payload }), stop.promise]);
      if (outcome === 'interrupted') this.interrupted(req, payload);
      return this.printWrite(outcome);
    } finally {
      stop.release();
    }
  }

  /** A write interrupted after it was sent: it may still be committed; says how to find out, then exits 130. */
  private interrupted(req: Request, payload: Uint8Array | undefined): never {
    this.io.err('interrupted: the write was sent to the pool and may still be committed');
    const check = checkCommand(req.operation, typeof req.identifier === 'string' ? req.identifier : String(req.identifier));
    if (check !== undefined) this.io.err(`check with: ${check}`);
    const file = join(tmpdir(), `quire-request-${String(req.reqId)}.json`);
    try {
      writeFileSync(file, payload ?? stringifyJson(req), { mode: 0o600 });
      this.io.err(`or ask for its outcome: quire submit --request-file ${file} (a committed request is answered with its txn, not written twice)`);
    } catch {
      this.io.err('or look for it with quire get-txn --ledger <ledger> --seq-no <n>');
    }
    throw new CliExit(ExitCode.INTERRUPTED);
  }

  async read(req: Request): Promise<void> {
    await this.send(req);
  }

  printWrite(w: WriteOutcome): void {
    if (this.globals.json === true) return this.io.out(stringifyJson(w.result));
    const txn = isPlainObject(w.result.txn) ? w.result.txn : {};
    const meta = isPlainObject(w.result.txnMetadata) ? w.result.txnMetadata : {};
    this.io.out(
      `Committed: type ${String(txn.type)}, seqNo ${String(meta.seqNo)}, txnTime ${String(meta.txnTime)}${meta.txnId !== undefined ? `, txnId ${String(meta.txnId)}` : ''}`,
    );
    this.io.out(`Agreed by ${w.nodes.join(', ')}`);
    this.io.out(pretty(txn.data ?? null));
  }

  /** Prints a read's result; a read that found nothing says "not found" and ends with exit status 1. */
  printRead(r: ReadOutcome, req?: Request): void {
    const type = typeof r.result.type === 'string' ? r.result.type : undefined;
    const missing = isNotFound(type, r.result, r.result.data);
    if (this.globals.json === true) {
      this.io.out(stringifyJson(r.result));
      if (missing) throw new CliExit(ExitCode.FAILED);
      return;
    }
    const how = r.verified
      ? `verified by state proof and BLS multi-signature (answered by ${r.nodes.join(', ')})`
      : `no proof available: ${r.nodes.length} nodes gave identical answers (${r.nodes.join(', ')})`;
    let data = r.result.data;
    if (typeof data === 'string' && (data.startsWith('{') || data.startsWith('['))) {
      try {
        data = parseJson(data);
      } catch {
        // not JSON after all: printed as the string it is
      }
    }
    if (missing) {
      this.io.out(`not found: ${readSubject(req?.operation ?? { type })}`);
      this.io.out(`(${how})`);
      throw new CliExit(ExitCode.FAILED);
    }
    this.io.out(pretty(data));
    if (r.result.seqNo !== undefined && r.result.seqNo !== null) this.io.out(`seqNo ${String(r.result.seqNo)}, txnTime ${String(r.result.txnTime ?? null)}`);
    this.io.out(`(${how})`);
  }

  printAction(answers: Map<string, NodeAnswer>): void {
    const out: Record<string, unknown> = {};
    for (const [node, a] of answers) {
      if (a.kind === 'error') {
        const { code, reason } = nodeFailure(node, a.error);
        out[node] = { error: code, ...(reason === undefined ? {} : { reason }) };
      } else out[node] = a.kind === 'reply' ? (a.message.result ?? a.message) : { op: a.kind === 'nack' ? 'REQNACK' : 'REJECT', reason: a.reason };
    }
    if (this.globals.json === true) return this.io.out(stringifyJson(out));
    for (const [node, v] of Object.entries(out)) this.io.out(`${node}: ${stringifyJson(v)}`);
    const refused = [...answers.values()].filter((a) => a.kind === 'nack' || a.kind === 'reject');
    if (refused.length > 0 && refused.length === answers.size) {
      const first = refused[0] as Extract<NodeAnswer, { kind: 'nack' | 'reject' }>;
      const data = {
        reason: first.reason,
        code: first.code,
        nodes: refused.filter((a) => a.kind === first.kind && a.reason === first.reason).map((a) => a.node),
      };
      throw first.kind === 'nack'
        ? new ClientError(ClientErrorCode.REQUEST_NACKED, data, first.reason)
        : new ClientError(ClientErrorCode.REQUEST_REJECTED, data, first.reason);
    }
  }
}

/** Lossless pretty JSON (2-space indent, big integers exact). */
export function pretty(v: unknown, indent = ''): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    const inner = indent + '  ';
    return `[\n${v.map((x) => inner + pretty(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) return '{}';
    const inner = indent + '  ';
    return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${pretty(v[k], inner)}`).join(',\n')}\n${indent}}`;
  }
  return stringifyJson(v);
}
