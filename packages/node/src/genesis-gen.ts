// Genesis files for local pools (formats.md §11): pool NODE lines in the exact shape of the spec
// (sorted keys, integer ports, txnId = SHA-256 hex of the alias) and the standard 5-line domain
// genesis (Trustee1, Steward1..4). Used by the e2e tests and the devnet script.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Role, TxnType, canonicalJson, sha256Hex } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeError, NodeErrorCode } from './errors.js';
import { deriveNodeKeys, type NodePublicKeys } from './keys.js';

export const POOL_GENESIS_FILE = 'pool_transactions_genesis';
export const DOMAIN_GENESIS_FILE = 'domain_transactions_genesis';

/** The standard local domain genesis, verbatim (formats.md §11). */
export const STANDARD_DOMAIN_GENESIS: readonly string[] = [
  '{"reqSignature":{},"txn":{"data":{"dest":"V4SGRU86Z58d6TV7PBUe6f","role":"0","verkey":"~CoRER63DVYnWZtK8uAzNbx"},"metadata":{},"type":"1"},"txnMetadata":{"seqNo":1},"ver":"1"}',
  '{"reqSignature":{},"txn":{"data":{"dest":"Th7MpTaRZVRYnPiabds81Y","role":"2","verkey":"~7TYfekw4GUagBnBVCqPjiC"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":2},"ver":"1"}',
  '{"reqSignature":{},"txn":{"data":{"dest":"EbP4aYNeTHL6q385GuVpRV","role":"2","verkey":"~RHGNtfvkgPEUQzQNtNxLNu"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":3},"ver":"1"}',
  '{"reqSignature":{},"txn":{"data":{"dest":"4cU41vWW82ArfxJxHkzXPG","role":"2","verkey":"~EMoPA6HrpiExVihsVfxD3H"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":4},"ver":"1"}',
  '{"reqSignature":{},"txn":{"data":{"dest":"TWwCRQRZ2ZHMJFn9TzLp7W","role":"2","verkey":"~UhP7K35SAXbix1kCQV4Upx"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":5},"ver":"1"}',
];

/** Standard development seeds (formats.md §2.3). */
export const TRUSTEE_SEED = '000000000000000000000000Trustee1';
export function stewardSeed(i: number): string {
  return `Steward${i}`.padStart(32, '0');
}
export function nodeSeed(alias: string): string {
  return alias.padStart(32, '0');
}

/** One validator of a pool genesis. */
export interface GenesisNodeSpec {
  alias: string;
  /** the node's public keys (from `quire-node init` or deriveNodeKeys) */
  keys: Pick<NodePublicKeys, 'dest' | 'blskey' | 'blskey_pop'>;
  /** DID of the steward that owns the node */
  steward: string;
  nodeIp: string;
  nodePort: number;
  clientIp: string;
  clientPort: number;
}

function checkPort(field: string, v: number): void {
  if (!Number.isSafeInteger(v) || v < 1 || v > 65535)
    throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field, reason: `port ${String(v)} out of range` });
}

/** The pool genesis NODE txn of one validator at `seqNo`, as one JSON line (no newline). */
export function poolGenesisLine(node: GenesisNodeSpec, seqNo: number): string {
  if (typeof node.alias !== 'string' || node.alias.length === 0 || node.alias.length > 256) {
    throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field: 'alias', reason: 'expected 1..256 characters' });
  }
  if (!Number.isSafeInteger(seqNo) || seqNo < 1)
    throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field: 'seqNo', reason: 'expected a positive integer' });
  checkPort('nodePort', node.nodePort);
  checkPort('clientPort', node.clientPort);
  const txn = {
    reqSignature: {},
    txn: {
      data: {
        data: {
          alias: node.alias,
          blskey: node.keys.blskey,
          blskey_pop: node.keys.blskey_pop,
          client_ip: node.clientIp,
          client_port: node.clientPort,
          node_ip: node.nodeIp,
          node_port: node.nodePort,
          services: ['VALIDATOR'],
        },
        dest: node.keys.dest,
      },
      metadata: { from: node.steward },
      type: TxnType.NODE,
    },
    txnMetadata: { seqNo, txnId: sha256Hex(node.alias) },
    ver: '1',
  };
  return canonicalJson(txn);
}

/** The pool genesis file content for a list of validators (seqNo 1, 2, ... in list order). */
export function poolGenesis(nodes: readonly GenesisNodeSpec[]): string {
  if (nodes.length === 0) throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field: 'nodes', reason: 'at least one node is needed' });
  const aliases = new Set(nodes.map((n) => n.alias));
  if (aliases.size !== nodes.length) throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field: 'nodes', reason: 'aliases must be distinct' });
  return nodes.map((n, i) => poolGenesisLine(n, i + 1)).join('\n') + '\n';
}

/**
 * The standard domain genesis file content: Trustee1 and Steward1..4 (STANDARD_DOMAIN_GENESIS), then, for a pool of
 * more than 4 stewards, the NYM of each Steward5..`stewards` (seed stewardSeed(i)) written by Trustee1, seqNo i + 1.
 * The devnet, the chaos pools and the simulated pools all take their domain genesis from here.
 */
export function standardDomainGenesis(stewards = 4): string {
  const lines = [...STANDARD_DOMAIN_GENESIS];
  if (stewards > 4) {
    const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED).did;
    for (let i = 5; i <= stewards; i++) {
      const s = Ed25519Signer.fromSeed(stewardSeed(i));
      lines.push(
        canonicalJson({
          reqSignature: {},
          txn: { data: { dest: s.did, role: Role.STEWARD, verkey: s.verkey }, metadata: { from: trustee }, type: TxnType.NYM },
          txnMetadata: { seqNo: i + 1 },
          ver: '1',
        }),
      );
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * The standard local pool of `count` nodes (Node1..NodeN, seeds of formats.md §2.3, node i owned
 * by Steward i) on `ip` with the given (node, client) ports.
 */
export function standardPoolNodes(ports: readonly { nodePort: number; clientPort: number }[], ip = '127.0.0.1'): GenesisNodeSpec[] {
  if (ports.length < 1 || ports.length > 4)
    throw new NodeError(NodeErrorCode.GENESIS_GEN_INVALID, { field: 'ports', reason: 'the standard pool has 1 to 4 nodes' });
  return ports.map((p, i) => {
    const alias = `Node${i + 1}`;
    const keys = deriveNodeKeys(alias, Buffer.from(nodeSeed(alias), 'utf8'));
    return { alias, keys, steward: Ed25519Signer.fromSeed(stewardSeed(i + 1)).did, nodeIp: ip, nodePort: p.nodePort, clientIp: ip, clientPort: p.clientPort };
  });
}

/** Writes `pool_transactions_genesis` and `domain_transactions_genesis` into `dir`; returns their paths. */
export async function writeGenesisFiles(dir: string, pool: string, domain: string = standardDomainGenesis()): Promise<{ pool: string; domain: string }> {
  await mkdir(dir, { recursive: true });
  const files = { pool: join(dir, POOL_GENESIS_FILE), domain: join(dir, DOMAIN_GENESIS_FILE) };
  await writeFile(files.pool, pool, 'utf8');
  await writeFile(files.domain, domain, 'utf8');
  return files;
}
