// Client-side helpers of the whole-pool tests: a read sent to one chosen node and verified like the
// SDK verifies it (trie proof, BLS multi-signature of n-f validators, freshness), the `quire` CLI
// and `read_ledger` as the user runs them, and raw requests built outside the SDK.
import { spawn } from 'node:child_process';
import { parseJson, signatureInput, stringifyJson, type Request } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection, verifyReadReply, type Pool, type VerifiedRead } from '@quire/client';
import { main as readLedgerMain } from '../../packages/storage/src/cli/read-ledger.js';
import { REPO_ROOT } from '../../devnet/lib/layout.js';
import { cliArgv } from './build.js';
import type { TestNode } from './test-pool.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Opens a raw client session (the network package's connector) to one node. */
export function connectTo(node: TestNode, timeoutMs = 5000): Promise<NodeConnection> {
  return NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: node.dest, timeoutMs });
}

/** Sends one request to one node over a fresh session and returns its parsed answer. */
export async function askNode(node: TestNode, request: unknown, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const c = await connectTo(node);
  try {
    const bytes = await c.request(enc.encode(typeof request === 'string' ? request : stringifyJson(request)), { timeoutMs });
    return parseJson(dec.decode(bytes)) as Record<string, unknown>;
  } finally {
    await c.close();
  }
}

/**
 * Reads from exactly this node and verifies the reply against the pool the client knows (its BLS
 * keys): throws VerificationError when the proof or the multi-signature does not hold.
 */
export async function readVerifiedFrom(client: Pool, node: TestNode, request: Request): Promise<VerifiedRead> {
  const reply = await askNode(node, request);
  if (reply.op !== 'REPLY') throw new Error(`${node.name} answered ${stringifyJson(reply)}`);
  return verifyReadReply({ reply, request, pool: client.ledger.blsKeys(), freshnessSeconds: client.options.freshnessSeconds });
}

/** A request signed with @quire/crypto directly, without the SDK's builders or signers. */
export function rawSignedRequest(seed: string, operation: Record<string, unknown>, reqId: number): Record<string, unknown> {
  const signer = Ed25519Signer.fromSeed(seed);
  const req: Record<string, unknown> = { identifier: signer.did, reqId, protocolVersion: 2, operation };
  req.signature = signer.signBase58(signatureInput(req as unknown as Request));
  return req;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The `quire` CLI: the package's bin when its dist is fresh, else its sources through tsx. */
export function quireArgv(): string[] {
  return cliArgv({ dist: 'packages/client/dist/cli/main.js', built: 'packages/client/bin/quire.js', source: 'test/support/bin/quire.ts' });
}

/** Runs `quire <args>` in a child process, as a user would. */
export function runQuire(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  const [exe, ...pre] = quireArgv();
  return new Promise((resolve, reject) => {
    const child = spawn(exe!, [...pre, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `quire` and requires exit 0; the error names the command and what it printed. */
export async function quireOk(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  const r = await runQuire(args, opts);
  if (r.code !== 0) throw new Error(`quire ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

export const LEDGER_TYPES = ['pool', 'domain', 'config', 'audit'] as const;

/**
 * `read_ledger --type <type> --data_dir <dir>` for the whole ledger (it reads a copy while the node runs); '' for an
 * empty ledger, for which read_ledger refuses the range 1-1000000 (a pool that wrote no config txn has one).
 */
export async function readLedger(dataDir: string, type: (typeof LEDGER_TYPES)[number]): Promise<string> {
  if ((await runReadLedger(['--type', type, '--count', '--data_dir', dataDir])).trim() === '0') return '';
  return runReadLedger(['--type', type, '--frm', '1', '--to', '1000000', '--data_dir', dataDir]);
}

async function runReadLedger(args: string[]): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await readLedgerMain(args, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  if (code !== 0) throw new Error(`read_ledger ${args.join(' ')} exited ${code}: ${err.join('')}`);
  return out.join('');
}

/** read_ledger of every ledger of every node: node name -> ledger type -> output. */
export async function readAllLedgers(nodes: readonly TestNode[]): Promise<Map<string, Record<string, string>>> {
  const all = new Map<string, Record<string, string>>();
  for (const n of nodes) {
    const per: Record<string, string> = {};
    for (const t of LEDGER_TYPES) per[t] = await readLedger(n.layout.dataDir, t);
    all.set(n.name, per);
  }
  return all;
}

/** Describes where the nodes' ledgers differ (sizes per ledger), or undefined when they are identical. */
export function ledgerDifference(all: Map<string, Record<string, string>>): string | undefined {
  const diffs: string[] = [];
  for (const t of LEDGER_TYPES) {
    const outs = [...all.entries()].map(([name, per]) => [name, per[t]!] as const);
    if (new Set(outs.map(([, o]) => o)).size > 1)
      diffs.push(`${t}: ${outs.map(([name, o]) => `${name}=${o.split('\n').filter((l) => l !== '').length} txns`).join(' ')}`);
  }
  return diffs.length > 0 ? diffs.join('; ') : undefined;
}
