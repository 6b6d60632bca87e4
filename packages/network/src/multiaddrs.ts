import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { isIPv4, isIPv6 } from 'node:net';

/** The TCP multiaddr of `host:port`, with `/p2p/<peerId>` when given (IPv4, IPv6 or a DNS name). */
export function tcpMultiaddr(host: string, port: number, peerId?: string): Multiaddr {
  const proto = isIPv4(host) ? 'ip4' : isIPv6(host) ? 'ip6' : 'dns';
  return multiaddr(`/${proto}/${host}/tcp/${port}${peerId === undefined ? '' : `/p2p/${peerId}`}`);
}

/** The listen address for `host:port` (port 0 = any free port). */
export function listenAddress(host: string, port: number): string {
  return tcpMultiaddr(host, port).toString();
}

/** The TCP port of the first listening multiaddr. */
export function tcpPortOf(addrs: Multiaddr[]): number {
  for (const a of addrs) {
    const m = /\/tcp\/(\d+)/.exec(a.toString());
    if (m !== null) return Number(m[1]);
  }
  return 0;
}
