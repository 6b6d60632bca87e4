/**
 * The quire wallet and profiles, in the spirit of indy-cli-rs: named wallets holding DID keys, encrypted under a
 * passphrase (scrypt key derivation, AES-256-GCM, file mode 0600); the wallet and DID in use; named pool profiles
 * (a genesis file each); and, per pool, the transaction author agreement accepted once, so that domain writes carry it.
 *
 * Files, under $QUIRE_CLI_HOME (default ~/.quire-cli):
 * - `wallets/<name>.wallet`: `{version, kdf: {name: "scrypt", N, r, p, salt}, cipher: "aes-256-gcm", iv, tag, data}`
 *   (base64), the plaintext being `{dids: {<alias>: {seed, did, verkey}}}` (seed in hex);
 * - `config.json` (nothing secret): the wallet, DID and pool in use, the pool profiles, the accepted agreements.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ClientError, ClientErrorCode } from '../errors.js';
import { DidKey } from '../requests/did.js';

export const HOME_ENV = 'QUIRE_CLI_HOME';
export const PASSPHRASE_ENV = 'QUIRE_WALLET_PASSPHRASE';

/** scrypt cost of new wallets: N = 2^15, r = 8, p = 1 (32 MiB, a fraction of a second) */
const KDF = { N: 1 << 15, r: 8, p: 1 } as const;
/**
 * The largest scrypt cost a wallet file may ask for (N = 2^20, r = 16, p = 4: 2 GiB at most): the parameters are
 * read from the file, and a damaged or foreign one must not make the CLI allocate without bound.
 */
const KDF_MAX = { N: 1 << 20, r: 16, p: 4 } as const;

function kdfParam(v: unknown, max: number): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= max ? v : undefined;
}
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface WalletDid {
  seed: string;
  did: string;
  verkey: string;
}

export interface AcceptedTaa {
  version: string;
  digest: string;
  mechanism: string;
}

export interface CliConfig {
  wallet?: string;
  /** the DID in use, per wallet */
  dids?: Record<string, string>;
  pool?: string;
  pools?: Record<string, { genesis: string }>;
  /** the agreement accepted, per pool genesis file (absolute path) */
  taa?: Record<string, AcceptedTaa>;
}

function walletError(reason: string, field = 'wallet'): ClientError {
  return new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field, reason }, `${field}: ${reason}`);
}

export function cliHome(): string {
  return process.env[HOME_ENV] ?? join(homedir(), '.quire-cli');
}

function writePrivate(file: string, text: string): void {
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export function readConfig(): CliConfig {
  const file = join(cliHome(), 'config.json');
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CliConfig;
  } catch {
    throw walletError(`${file} is not valid JSON`, 'config');
  }
}

export function writeConfig(c: CliConfig): void {
  writePrivate(join(cliHome(), 'config.json'), JSON.stringify(c, null, 2) + '\n');
}

function walletFile(name: string): string {
  if (!NAME.test(name)) throw walletError(`a wallet name is 1-64 letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  return join(cliHome(), 'wallets', `${name}.wallet`);
}

export function walletNames(): string[] {
  const dir = join(cliHome(), 'wallets');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.wallet'))
    .map((f) => f.slice(0, -'.wallet'.length))
    .sort();
}

function seal(plain: Record<string, unknown>, passphrase: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(passphrase, salt, 32, { ...KDF, maxmem: 128 * KDF.N * KDF.r * 2 });
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([c.update(JSON.stringify(plain), 'utf8'), c.final()]);
  return (
    JSON.stringify(
      {
        version: 1,
        kdf: { name: 'scrypt', ...KDF, salt: salt.toString('base64') },
        cipher: 'aes-256-gcm',
        iv: iv.toString('base64'),
        tag: c.getAuthTag().toString('base64'),
        data: data.toString('base64'),
      },
      null,
      2,
    ) + '\n'
  );
}

function unseal(text: string, passphrase: string, name: string): { dids: Record<string, WalletDid> } {
  let f: { kdf: { N: number; r: number; p: number; salt: string }; iv: string; tag: string; data: string };
  try {
    f = JSON.parse(text) as typeof f;
  } catch {
    throw walletError(`the file of wallet ${name} is not valid JSON`);
  }
  const kdf = (f as { kdf?: Record<string, unknown> } | null)?.kdf;
  const N = kdfParam(kdf?.N, KDF_MAX.N);
  const r = kdfParam(kdf?.r, KDF_MAX.r);
  const p = kdfParam(kdf?.p, KDF_MAX.p);
  if (kdf?.name !== 'scrypt' || N === undefined || r === undefined || p === undefined || (N & (N - 1)) !== 0 || N < 2) {
    throw walletError(
      `the file of wallet ${name} asks for a key derivation this CLI does not do (scrypt with N a power of 2 up to 2^20, r up to 16, p up to 4)`,
    );
  }
  try {
    const key = scryptSync(passphrase, Buffer.from(f.kdf.salt, 'base64'), 32, { N, r, p, maxmem: 128 * N * r * 2 });
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(f.iv, 'base64'));
    d.setAuthTag(Buffer.from(f.tag, 'base64'));
    const plain = Buffer.concat([d.update(Buffer.from(f.data, 'base64')), d.final()]);
    return JSON.parse(plain.toString('utf8')) as { dids: Record<string, WalletDid> };
  } catch {
    throw walletError(`wrong passphrase for wallet ${name} (or a damaged wallet file)`);
  }
}

/** The passphrase: $QUIRE_WALLET_PASSPHRASE, else asked on the terminal (not echoed). */
export async function passphrase(prompt: string): Promise<string> {
  const env = process.env[PASSPHRASE_ENV];
  if (env !== undefined && env !== '') return env;
  if (process.stdin.isTTY !== true) throw walletError(`a passphrase is needed: set $${PASSPHRASE_ENV} or run in a terminal`, 'passphrase');
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput?: (s: string) => void };
  process.stderr.write(prompt);
  out._writeToOutput = () => undefined; // no echo
  try {
    return await new Promise<string>((res) => rl.question('', res));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

/** An opened wallet: its DIDs, saved back under the same passphrase. */
export class Wallet {
  private constructor(
    readonly name: string,
    private readonly pass: string,
    readonly dids: Record<string, WalletDid>,
  ) {}

  static create(name: string, pass: string): Wallet {
    const file = walletFile(name);
    if (existsSync(file)) throw walletError(`wallet ${name} already exists (${file})`);
    if (pass.length < 8) throw walletError('the passphrase needs at least 8 characters', 'passphrase');
    const w = new Wallet(name, pass, {});
    w.save();
    return w;
  }

  static open(name: string, pass: string): Wallet {
    const file = walletFile(name);
    if (!existsSync(file)) throw walletError(`no wallet ${name} (quire wallet list; quire wallet create ${name})`);
    return new Wallet(name, pass, unseal(readFileSync(file, 'utf8'), pass, name).dids);
  }

  save(): void {
    writePrivate(walletFile(this.name), seal({ dids: this.dids }, this.pass));
  }

  addDid(alias: string, key: DidKey): WalletDid {
    if (!NAME.test(alias)) throw walletError(`an alias is 1-64 letters, digits, '.', '_' or '-', got ${JSON.stringify(alias)}`, '--alias');
    if (this.dids[alias] !== undefined) throw walletError(`the wallet already has a DID named ${alias}`, '--alias');
    const d: WalletDid = { seed: key.seedHex, did: key.did, verkey: key.verkey };
    this.dids[alias] = d;
    this.save();
    return d;
  }
}

/** The wallet in use, opened (passphrase from the environment or the terminal); undefined when none is in use. */
export async function openCurrentWallet(): Promise<Wallet | undefined> {
  const c = readConfig();
  if (c.wallet === undefined) return undefined;
  return Wallet.open(c.wallet, await passphrase(`passphrase of wallet ${c.wallet}: `));
}

/** The signing key of the wallet's DID in use, when a wallet and a DID are in use. */
export async function walletKey(): Promise<DidKey | undefined> {
  const c = readConfig();
  if (c.wallet === undefined) return undefined;
  const alias = c.dids?.[c.wallet];
  if (alias === undefined) return undefined;
  const w = await openCurrentWallet();
  const d = w?.dids[alias];
  if (d === undefined) throw walletError(`the DID in use, ${alias}, is not in wallet ${c.wallet} (quire did use <alias>)`, 'did');
  return DidKey.fromSeed(d.seed);
}

/** The genesis file of the pool profile in use, when one is. */
export function profileGenesis(): string | undefined {
  const c = readConfig();
  return c.pool === undefined ? undefined : c.pools?.[c.pool]?.genesis;
}

export function addPool(name: string, genesis: string): string {
  if (!NAME.test(name)) throw walletError(`a pool name is 1-64 letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`, 'pool');
  const file = isAbsolute(genesis) ? genesis : resolve(genesis);
  if (!existsSync(file)) throw walletError(`cannot read ${file}`, '--genesis');
  const c = readConfig();
  c.pools = { ...c.pools, [name]: { genesis: file } };
  c.pool ??= name;
  writeConfig(c);
  return file;
}

export function usePool(name: string): void {
  const c = readConfig();
  if (c.pools?.[name] === undefined) throw walletError(`no pool profile ${name} (quire pool add ${name} --genesis FILE)`, 'pool');
  c.pool = name;
  writeConfig(c);
}

/** The agreement accepted for the pool of this genesis file, if any. */
export function acceptedTaa(genesisFile: string): AcceptedTaa | undefined {
  return readConfig().taa?.[resolve(genesisFile)];
}

export function rememberTaa(genesisFile: string, taa: AcceptedTaa): void {
  const c = readConfig();
  c.taa = { ...c.taa, [resolve(genesisFile)]: taa };
  writeConfig(c);
}
