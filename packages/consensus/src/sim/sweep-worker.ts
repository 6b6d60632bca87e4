// Child process of a parallel sweep (sweep.ts): loads the runner module named by its first
// argument (default: the stand-in world), asks for runs one at a time and sends back results.
import { type ToWorker, loadRunner } from './sweep.js';

if (process.send !== undefined) {
  const send = process.send.bind(process);
  const simulate = await loadRunner(process.argv[2]);
  // runs are handled one after another even when the runner is asynchronous
  let chain: Promise<void> = Promise.resolve();
  process.on('message', (m: ToWorker) => {
    chain = chain.then(async () => {
      if ('done' in m) {
        process.disconnect();
        return;
      }
      send({ result: await simulate(m.run) });
    });
  });
  send({ ready: true });
}
