// A validator's client host for the in-process benches: @quire/network's ClientHost on a free loopback port with
// Node<index>'s seed, and rate and session limits far above what a bench sends, so that the host measures its work,
// not its throttles.
import { ClientHost } from '@quire/network';

/** The client host of validator Node<index> (1-based), with `modules` as a node gives them (its door, if any) */
export function benchClientHost(index: number, modules?: Parameters<typeof ClientHost.create>[1]): Promise<ClientHost> {
  return ClientHost.create(
    {
      seed: new TextEncoder().encode(`Node${index}`.padStart(32, '0')),
      host: '127.0.0.1',
      port: 0,
      clientRate: 1_000_000,
      clientBurst: 1_000_000,
      maxPendingPerSession: 100_000,
    },
    modules,
  );
}
