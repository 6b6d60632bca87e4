// A NodeConnection's session is dialled once for every request waiting for it: a caller that stops
// waiting (its request settled by other nodes' answers) must not end the dial the others share.
import { expect } from 'chai';
import { parseJson, stringifyJson } from '@quire/common';
import { ClientHost } from '@quire/network';
import { NodeConnection, type ConnectionMessage } from '../../src/index.js';
import { SETTLED } from '../../src/pool/exchange.js';
import { createClientLibp2p } from '../../src/transport/libp2p.js';
import { NODE_NAMES, nodeDests, nodeSeed } from '../unit/fixtures.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('NodeConnection: one dial shared by the requests waiting for it', function () {
  this.timeout(30_000);
  let host: ClientHost;
  let libp2p: Awaited<ReturnType<typeof createClientLibp2p>>;

  before(async () => {
    host = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[0]!)), host: '127.0.0.1', port: 0 });
    host.on('request', (_clientId, bytes, respond) => {
      const req = parseJson(bytes) as Record<string, unknown>;
      void respond(enc.encode(stringifyJson({ op: 'REPLY', result: { echo: req.n } })));
    });
    libp2p = await createClientLibp2p();
  });

  after(async () => {
    await libp2p?.stop();
    await host?.close();
  });

  it('a request given up during the dial (settled elsewhere) leaves the dial to the request still waiting, which is answered', async () => {
    const conn = new NodeConnection({ address: { alias: NODE_NAMES[0]!, dest: nodeDests[0]!, host: '127.0.0.1', port: host.port } }, { libp2p });
    try {
      const settled = new AbortController();
      const first = conn.request(enc.encode(stringifyJson({ n: 1 })), () => undefined, settled.signal);
      settled.abort(SETTLED);
      const reply = new Promise<ConnectionMessage>(
        (resolve) =>
          void conn
            .request(enc.encode(stringifyJson({ n: 2 })), resolve, AbortSignal.timeout(20_000))
            .catch((e: unknown) => resolve({ kind: 'closed', reason: String(e) })),
      );
      const firstOutcome = await first.then(
        () => 'sent',
        (e: unknown) => (e === SETTLED ? 'gave up' : String(e)),
      );
      const m = await reply;
      expect(m.kind, JSON.stringify(m)).to.equal('response');
      expect(parseJson(dec.decode((m as { payload: Uint8Array }).payload))).to.deep.equal({ op: 'REPLY', result: { echo: 2 } });
      expect(firstOutcome).to.equal('gave up');
    } finally {
      await conn.close();
    }
  });
});
