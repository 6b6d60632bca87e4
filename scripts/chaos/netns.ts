// The chaos harness's network: one Linux network namespace per validator and one for the client
// workload, each with its own address on a private /24, joined by veth pairs to a bridge that lives
// in a namespace of its own, so the pool runs on non-loopback addresses as on separate hosts and
// nothing of the host's interfaces or routes is touched. Faults are made with what this kernel has:
// links down/up (in the bridge namespace), nftables drop rules for partitions, nftables `numgen`
// for random loss, the netdev egress `dup` statement for duplication, and a tbf bandwidth cap for
// delay (the `netem` qdisc, which would delay and reorder packets, is not built into this kernel;
// a capped link delays by queueing, and TCP hides reordering from the nodes anyway).
//
// Every name starts with `quire-chaos-<pid>-`, so a later run finds and removes what a killed run
// left behind (`cleanupStale`, for namespaces whose creating process is gone).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const NS_PREFIX = 'quire-chaos-';

export class NetnsError extends Error {
  constructor(
    readonly code: 'NOT_ROOT' | 'NO_IP' | 'NO_NFT' | 'NETNS_FAILED' | 'COMMAND_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'NetnsError';
  }
}

function run(argv: string[], input?: string): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8', timeout: 15_000 });
  if (r.error !== undefined || r.status !== 0) {
    throw new NetnsError('COMMAND_FAILED', `${argv.join(' ')} failed: ${(r.stderr ?? '').trim() || r.error?.message || `exit ${r.status}`}`);
  }
  return r.stdout;
}

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

/** Why namespaces cannot be used here, or undefined when they can (root, `ip`, `nft`, a namespace can be made). */
export function netnsUnavailableReason(): string | undefined {
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'network namespaces need root (run as root, or use --loopback for a pool on 127.0.0.1 without partitions)';
  if (!has('ip')) return 'the `ip` command (iproute2) is missing (install iproute2, or use --loopback)';
  if (!has('nft')) return 'the `nft` command is missing (apt-get install -y nftables, or use --loopback)';
  const probe = `${NS_PREFIX}${process.pid}-probe`;
  try {
    run(['ip', 'netns', 'add', probe]);
    run(['ip', 'netns', 'exec', probe, 'nft', 'list', 'ruleset']);
  } catch (e) {
    return `a network namespace could not be made or filtered: ${(e as Error).message} (use --loopback)`;
  } finally {
    spawnSync('ip', ['netns', 'del', probe]);
  }
  return undefined;
}

/** Namespaces of earlier runs whose process is gone: deleted. Returns their names. */
export function cleanupStale(): string[] {
  const removed: string[] = [];
  const list = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  for (const line of list.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = new RegExp(`^${NS_PREFIX}(\\d+)-`).exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && existsSync(`/proc/${pid}`)) continue;
    killNamespaceProcesses(name);
    spawnSync('ip', ['netns', 'del', name]);
    removed.push(name);
  }
  return removed;
}

function killNamespaceProcesses(ns: string): void {
  const pids = (spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout ?? '').split('\n').filter((p) => /^\d+$/.test(p));
  for (const p of pids) {
    try {
      process.kill(Number(p), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

export interface Host {
  /** the host's name in the harness (Node1..., client) */
  name: string;
  ns: string;
  ip: string;
  /** the interface inside the host's namespace */
  dev: string;
  /** its peer, a port of the bridge in the bridge namespace */
  bridgePort: string;
}

/** What a host currently suffers, so that heal() undoes exactly it. */
interface HostFaults {
  linkDown: boolean;
  dropFrom: Set<string>;
  lossPercent: number;
  dupPercent: number;
  rateKbit: number;
}

export class ChaosNetwork {
  readonly hosts = new Map<string, Host>();
  private readonly faults = new Map<string, HostFaults>();
  readonly bridgeNs: string;
  private closed = false;

  private constructor(
    readonly prefix: string,
    readonly subnet: string,
  ) {
    this.bridgeNs = `${prefix}br`;
  }

  /**
   * Creates the bridge namespace and one namespace per host name, addresses `<subnet>.<k+1>`
   * (hosts in order). On failure everything made so far is removed again.
   */
  static create(names: readonly string[], subnet = `10.${200 + (process.pid % 50)}.${(process.pid >> 6) % 250}`): ChaosNetwork {
    const net = new ChaosNetwork(`${NS_PREFIX}${process.pid}-`, subnet);
    try {
      run(['ip', 'netns', 'add', net.bridgeNs]);
      run(['ip', '-n', net.bridgeNs, 'link', 'add', 'br0', 'type', 'bridge']);
      run(['ip', '-n', net.bridgeNs, 'link', 'set', 'br0', 'up']);
      names.forEach((name, k) => net.addHost(name, k + 1));
    } catch (e) {
      net.close();
      throw e;
    }
    return net;
  }

  /** Adds a host namespace on the bridge with address `<subnet>.<octet>`. */
  addHost(name: string, octet: number): Host {
    const ns = `${this.prefix}${name.toLowerCase()}`;
    const dev = `qc${octet}`;
    const bridgePort = `p${octet}`;
    const ip = `${this.subnet}.${octet}`;
    run(['ip', 'netns', 'add', ns]);
    run(['ip', 'link', 'add', dev, 'netns', ns, 'type', 'veth', 'peer', 'name', bridgePort, 'netns', this.bridgeNs]);
    run(['ip', '-n', this.bridgeNs, 'link', 'set', bridgePort, 'master', 'br0']);
    run(['ip', '-n', this.bridgeNs, 'link', 'set', bridgePort, 'up']);
    run(['ip', '-n', ns, 'addr', 'add', `${ip}/24`, 'dev', dev]);
    run(['ip', '-n', ns, 'link', 'set', dev, 'up']);
    run(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    const host: Host = { name, ns, ip, dev, bridgePort };
    this.hosts.set(name, host);
    this.faults.set(name, { linkDown: false, dropFrom: new Set(), lossPercent: 0, dupPercent: 0, rateKbit: 0 });
    return host;
  }

  host(name: string): Host {
    const h = this.hosts.get(name);
    if (h === undefined) throw new NetnsError('NETNS_FAILED', `no host ${name} in the chaos network`);
    return h;
  }

  /** argv prefix that runs a command inside a host's namespace. */
  execPrefix(name: string): string[] {
    return ['ip', 'netns', 'exec', this.host(name).ns];
  }

  /** The host's cable pulled (down) or plugged back (up), at the bridge. */
  setLink(name: string, up: boolean): void {
    run(['ip', '-n', this.bridgeNs, 'link', 'set', this.host(name).bridgePort, up ? 'up' : 'down']);
    this.faults.get(name)!.linkDown = !up;
  }

  /**
   * Partition: no packet between any host of `a` and any host of `b` (both directions, dropped by
   * nftables in each host's namespace). Hosts in neither side keep seeing everyone (a bridge node).
   */
  partition(a: readonly string[], b: readonly string[]): void {
    for (const x of a) for (const y of b) this.faults.get(x)!.dropFrom.add(this.host(y).ip);
    for (const y of b) for (const x of a) this.faults.get(y)!.dropFrom.add(this.host(x).ip);
    for (const h of [...a, ...b]) this.applyRules(h);
  }

  /** Random loss of `percent` of the host's packets, both directions. */
  setLoss(name: string, percent: number): void {
    this.faults.get(name)!.lossPercent = percent;
    this.applyRules(name);
  }

  /** Duplication of about `percent` of the packets the host sends. */
  setDup(name: string, percent: number): void {
    this.faults.get(name)!.dupPercent = percent;
    this.applyRules(name);
  }

  /** A bandwidth cap on what the host sends (tbf): packets queue, so they are delayed; 0 removes it. */
  setRate(name: string, kbit: number): void {
    const h = this.host(name);
    const f = this.faults.get(name)!;
    if (f.rateKbit > 0) spawnSync('ip', ['netns', 'exec', h.ns, 'tc', 'qdisc', 'del', 'dev', h.dev, 'root']);
    f.rateKbit = 0;
    if (kbit > 0) {
      run(['ip', 'netns', 'exec', h.ns, 'tc', 'qdisc', 'add', 'dev', h.dev, 'root', 'tbf', 'rate', `${kbit}kbit`, 'burst', '16kb', 'latency', '2000ms']);
      f.rateKbit = kbit;
    }
  }

  /** Writes the host's nftables rules from its current faults (one table, replaced atomically). */
  private applyRules(name: string): void {
    const h = this.host(name);
    const f = this.faults.get(name)!;
    const lines: string[] = [];
    // delete-then-add in one transaction: `add table` first so that the delete never fails
    lines.push('add table inet quire_chaos', 'delete table inet quire_chaos');
    lines.push('add table netdev quire_chaos_dev', 'delete table netdev quire_chaos_dev');
    const drops = [...f.dropFrom];
    if (drops.length > 0 || f.lossPercent > 0) {
      lines.push('table inet quire_chaos {');
      for (const [chain, hook, dir] of [
        ['inp', 'input', 'saddr'],
        ['out', 'output', 'daddr'],
      ] as const) {
        lines.push(`  chain ${chain} {`, `    type filter hook ${hook} priority 0; policy accept;`);
        if (drops.length > 0) lines.push(`    ip ${dir} { ${drops.join(', ')} } drop`);
        if (f.lossPercent > 0) lines.push(`    ip protocol tcp numgen random mod 100 < ${Math.round(f.lossPercent)} drop`);
        lines.push('  }');
      }
      lines.push('}');
    }
    if (f.dupPercent > 0) {
      lines.push(
        'table netdev quire_chaos_dev {',
        '  chain eg {',
        `    type filter hook egress device "${h.dev}" priority 0; policy accept;`,
        `    numgen random mod 100 < ${Math.round(f.dupPercent)} dup to "${h.dev}"`,
        '  }',
        '}',
      );
    }
    run(['ip', 'netns', 'exec', h.ns, 'nft', '-f', '-'], lines.join('\n') + '\n');
  }

  /** Undoes every fault of every host: links up, rules removed, caps removed. */
  heal(): void {
    for (const [name, f] of this.faults) {
      if (f.linkDown) this.setLink(name, true);
      if (f.rateKbit > 0) this.setRate(name, 0);
      if (f.dropFrom.size > 0 || f.lossPercent > 0 || f.dupPercent > 0) {
        f.dropFrom.clear();
        f.lossPercent = 0;
        f.dupPercent = 0;
        this.applyRules(name);
      }
    }
  }

  /** Kills what still runs in the namespaces and deletes them. Idempotent; never throws. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const h of this.hosts.values()) {
      killNamespaceProcesses(h.ns);
      spawnSync('ip', ['netns', 'del', h.ns]);
    }
    spawnSync('ip', ['netns', 'del', this.bridgeNs]);
  }
}

/** True when `execFileSync` of `ip netns list` shows none of this process's namespaces (tests). */
export function ownNamespacesGone(): boolean {
  const list = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return !list.split('\n').some((l) => l.startsWith(`${NS_PREFIX}${process.pid}-`));
}
