/** The client's libp2p node: TCP + Noise + Yamux + Identify, a random transport key, no listener, no discovery. */
import '@quire/common/polyfill';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { identify } from '@libp2p/identify';
import { tcp } from '@libp2p/tcp';
import { createLibp2p, type Libp2p } from 'libp2p';

export async function createClientLibp2p(): Promise<Libp2p> {
  return createLibp2p({
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: { reconnectRetries: 0 },
    services: { identify: identify() },
  });
}
