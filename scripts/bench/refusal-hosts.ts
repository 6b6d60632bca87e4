// The node side of refusal-cost.ts, in a process of its own so that its CPU is the nodes' alone: four validators'
// client hosts (@quire/network's ClientHost, each node's seed), each with its node's door (@quire/node's
// ClientPath.doorAtFrame over in-memory stores holding the standard genesis) and an admission that refuses every write,
// as an intake at its limit refuses a write past its place: every write is answered REQNACK "pool overloaded" as its
// frame is read. Sends the hosts' ports to the parent; on 'cpu' sends its CPU time (us) and the refusals so far; exits
// on 'close'.
import type { ClientHost } from '@quire/network';
import { ClientPath, testLogger } from '@quire/node';
import { memoryFixture } from '../../packages/node/test/unit/helpers.js';
import { benchClientHost } from './bench-client-host.js';

const send = process.send?.bind(process);
if (send === undefined) throw new Error('refusal-hosts.ts runs as a child process of refusal-cost.ts');

const enc = new TextEncoder();
const fx = await memoryFixture();
const paths: ClientPath[] = [];
const hosts: ClientHost[] = [];
for (let i = 0; i < 4; i++) {
  const path = new ClientPath(
    {},
    {
      pipeline: fx.pipeline,
      stores: fx.stores,
      submit: () => {
        throw new Error('a write reached consensus: the door admitted it');
      },
      admit: () => false,
      now: () => Math.floor(Date.now() / 1000),
      logger: testLogger(),
    },
  );
  const host = await benchClientHost(i + 1, { door: (payload, clientId) => path.doorAtFrame(payload, clientId) });
  // what the door hands on (nothing here: every write is refused) would go to the node's request handler
  host.on('request', (_clientId, _bytes, respond) => respond(enc.encode('{"op":"REQNACK","reason":"not refused at the door"}')));
  paths.push(path);
  hosts.push(host);
}

process.on('message', (m) => {
  if (m === 'cpu') {
    const c = process.cpuUsage();
    send({ cpuUs: c.user + c.system, refused: paths.reduce((n, p) => n + p.refusedCount, 0) });
  } else if (m === 'close') {
    void Promise.all(hosts.map((h) => h.close()))
      .then(() => fx.stores.kv.close())
      .then(() => process.exit(0));
  }
});
send({ ports: hosts.map((h) => h.port) });
