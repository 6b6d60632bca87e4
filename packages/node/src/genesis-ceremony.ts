// The genesis ceremony of a pool of real hosts (`quire-node genesis`): each node operator runs
// `quire-node init --json` with the host's addresses and hands over its output (alias, dest, BLS
// key and proof of possession, addresses; never a secret); the trustees and stewards hand over
// their DIDs and verkeys. From these, the pool genesis (one NODE txn per node, owned by its
// steward) and the domain genesis (the trustees' and stewards' NYMs) are built, after checking
// everything a pool would otherwise trip over at its first start: every proof of possession,
// distinct aliases, keys and addresses, one node per steward, verkeys that belong to their DIDs.
import { isIP } from 'node:net';
import { Role, TxnType, b58decodeOrUndefined, canonicalJson, isValidDid, resolveVerkey } from '@quire/common';
import { blsVerifyPop } from '@quire/crypto';
import { NodeError, NodeErrorCode } from './errors.js';
import { poolGenesis, type GenesisNodeSpec } from './genesis-gen.js';

/** What `quire-node init --json` prints (addresses included when given to init). */
export interface InitOutput {
  name: string;
  dest: string;
  blskey: string;
  blskey_pop: string;
  node_ip: string;
  node_port: number;
  client_ip: string;
  client_port: number;
}

/** A trustee or steward: a DID and its verkey (full, or abbreviated `~...`). */
export interface GenesisIdentity {
  did: string;
  verkey: string;
}

export interface CeremonyInput {
  /** the nodes, in pool genesis order (`source` names where each came from, in errors) */
  nodes: { init: unknown; source: string }[];
  /** at least one trustee; the first one is the author of the stewards' NYMs */
  trustees: GenesisIdentity[];
  /** one steward per node, in the nodes' order: steward i owns node i */
  stewards: GenesisIdentity[];
}

export interface CeremonyOutput {
  pool: string;
  domain: string;
  nodes: GenesisNodeSpec[];
}

function invalid(field: string, reason: string): NodeError {
  return new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field, reason });
}

function port(v: unknown, field: string): number {
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > 65535)
    throw invalid(field, `a port from 1 to 65535 is needed, got ${JSON.stringify(v)}`);
  return n;
}

function text(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0) throw invalid(field, `a non-empty string is needed, got ${JSON.stringify(v)}`);
  return v;
}

/** One node's init output, checked: keys decode, the proof of possession verifies, addresses are IPs and ports. */
export function checkInitOutput(v: unknown, source: string): InitOutput {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(source, 'not a JSON object (the output of quire-node init --json)');
  const o = v as Record<string, unknown>;
  const name = text(o.name ?? o.alias, `${source}: name`);
  if (name.length > 256) throw invalid(`${source}: name`, 'at most 256 characters');
  const dest = text(o.dest, `${source}: dest`);
  if (b58decodeOrUndefined(dest)?.length !== 32) throw invalid(`${source}: dest`, 'not a base58 32-byte ed25519 verkey');
  const blskey = text(o.blskey, `${source}: blskey`);
  const blsBytes = b58decodeOrUndefined(blskey);
  if (blsBytes?.length !== 48) throw invalid(`${source}: blskey`, 'not a base58 48-byte BLS public key');
  const pop = text(o.blskey_pop, `${source}: blskey_pop`);
  const popBytes = b58decodeOrUndefined(pop);
  let popOk: boolean;
  try {
    popOk = popBytes !== undefined && blsVerifyPop(blsBytes, popBytes);
  } catch {
    popOk = false;
  }
  if (!popOk) throw invalid(`${source}: blskey_pop`, `the proof of possession does not verify against the BLS key of ${name}`);
  const out: InitOutput = {
    name,
    dest,
    blskey,
    blskey_pop: pop,
    node_ip: text(o.node_ip, `${source}: node_ip`),
    node_port: port(o.node_port, `${source}: node_port`),
    client_ip: text(o.client_ip, `${source}: client_ip`),
    client_port: port(o.client_port, `${source}: client_port`),
  };
  for (const f of ['node_ip', 'client_ip'] as const)
    if (isIP(out[f]) !== 4) throw invalid(`${source}: ${f}`, `an IPv4 address is needed, got ${JSON.stringify(out[f])}`);
  if (out.node_ip === out.client_ip && out.node_port === out.client_port)
    throw invalid(`${source}: client_port`, 'the node and client listeners need different addresses');
  return out;
}

function checkIdentity(id: GenesisIdentity, field: string): void {
  if (!isValidDid(id.did)) throw invalid(field, `${JSON.stringify(id.did)} is not a DID (base58 of 16 bytes)`);
  let ok: boolean;
  try {
    ok = resolveVerkey(id.did, id.verkey) !== null;
  } catch {
    ok = false;
  }
  if (!ok) throw invalid(field, `${JSON.stringify(id.verkey)} is not a verkey of ${id.did} (full, or abbreviated ~... of the same key)`);
}

/** Parses `DID:VERKEY` (the form of --trustee and --steward). */
export function parseIdentity(v: string, field: string): GenesisIdentity {
  const i = v.indexOf(':');
  if (i <= 0 || i === v.length - 1) throw invalid(field, `expected DID:VERKEY, got ${JSON.stringify(v)}`);
  return { did: v.slice(0, i), verkey: v.slice(i + 1) };
}

/** Builds and checks both genesis files. Throws NodeError GENESIS_GEN_INVALID naming the first problem. */
export function genesisCeremony(input: CeremonyInput): CeremonyOutput {
  if (input.nodes.length === 0) throw invalid('--node', 'at least one node is needed (the output of quire-node init --json on each host)');
  if (input.trustees.length === 0) throw invalid('--trustee', 'at least one trustee DID:VERKEY is needed');
  if (input.stewards.length !== input.nodes.length)
    throw invalid('--steward', `one steward per node, in the order of the nodes: ${input.nodes.length} nodes, ${input.stewards.length} stewards`);
  const nodes = input.nodes.map((n) => checkInitOutput(n.init, n.source));
  input.trustees.forEach((t, i) => checkIdentity(t, `--trustee ${i + 1}`));
  input.stewards.forEach((s, i) => checkIdentity(s, `--steward ${i + 1}`));

  const seen = new Map<string, string>();
  const unique = (key: string, what: string, who: string): void => {
    const before = seen.get(key);
    if (before !== undefined) throw invalid(who, `${what} is also that of ${before}`);
    seen.set(key, who);
  };
  nodes.forEach((n, i) => {
    const who = `${input.nodes[i].source} (${n.name})`;
    unique(`alias|${n.name}`, `the alias ${n.name}`, who);
    unique(`dest|${n.dest}`, 'the node key (dest)', who);
    unique(`bls|${n.blskey}`, 'the BLS key', who);
    unique(`addr|${n.node_ip}:${n.node_port}`, `the address ${n.node_ip}:${n.node_port}`, who);
    unique(`addr|${n.client_ip}:${n.client_port}`, `the address ${n.client_ip}:${n.client_port}`, who);
  });
  [...input.trustees, ...input.stewards].forEach((id, i) => {
    const who = i < input.trustees.length ? `--trustee ${i + 1}` : `--steward ${i - input.trustees.length + 1}`;
    unique(`did|${id.did}`, `the DID ${id.did} (one node per steward; a trustee is not also a steward)`, who);
  });

  const specs: GenesisNodeSpec[] = nodes.map((n, i) => ({
    alias: n.name,
    keys: { dest: n.dest, blskey: n.blskey, blskey_pop: n.blskey_pop },
    steward: input.stewards[i].did,
    nodeIp: n.node_ip,
    nodePort: n.node_port,
    clientIp: n.client_ip,
    clientPort: n.client_port,
  }));
  const author = input.trustees[0].did;
  const nym = (id: GenesisIdentity, role: string, seqNo: number, from: string | undefined): string =>
    canonicalJson({
      reqSignature: {},
      txn: { data: { dest: id.did, role, verkey: id.verkey }, metadata: from === undefined ? {} : { from }, type: TxnType.NYM },
      txnMetadata: { seqNo },
      ver: '1',
    });
  const domain = [
    ...input.trustees.map((t, i) => nym(t, Role.TRUSTEE, i + 1, i === 0 ? undefined : author)),
    ...input.stewards.map((s, i) => nym(s, Role.STEWARD, input.trustees.length + i + 1, author)),
  ];
  return { pool: poolGenesis(specs), domain: domain.join('\n') + '\n', nodes: specs };
}
