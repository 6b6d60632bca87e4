// Child process of a parallel sweep (sweep.ts): asks for runs one at a time and sends back results.
import { type SimulationOptions, runSimulation } from './simulator.js';

if (process.send !== undefined) {
  const send = process.send.bind(process);
  process.on('message', (m: { run: SimulationOptions } | { done: true }) => {
    if ('done' in m) {
      process.disconnect();
      return;
    }
    send({ result: runSimulation(m.run) });
  });
  send({ ready: true });
}
