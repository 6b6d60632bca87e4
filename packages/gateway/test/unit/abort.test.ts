// Creating and starting a gateway take an AbortSignal: aborted before or between their steps, they reject with
// GatewayError ABORTED and leave no listener open.
import { freePort, expectCodeAsync, portIsFree, signalAbortingAtCheck } from '@quire/testing';
import { expect } from 'chai';
import { Gateway, GatewayError, GatewayErrorCode, type GatewayPool } from '../../src/index.js';

/** A pool that answers nothing (these tests never send it a request). */
const silentPool = {
  f: 1,
  n: 4,
  status: () => ({ ledgerSize: 4, root: 'r', n: 4, f: 1, validators: [], demoted: [] }),
  ledger: { size: 0 },
} as unknown as GatewayPool;

describe('gateway start under an AbortSignal', () => {
  it('create: an aborted signal is refused before the genesis file is opened', async () => {
    const ac = new AbortController();
    ac.abort(new GatewayError(GatewayErrorCode.SHUTTING_DOWN));
    await expectCodeAsync(
      Gateway.create({ metrics: false }, { genesisFile: '/nonexistent/genesis' }, { signal: ac.signal }),
      GatewayError,
      GatewayErrorCode.ABORTED,
    );
  });

  it('create: a signal aborted while the server is built rejects with ABORTED', async () => {
    await expectCodeAsync(
      Gateway.create({ metrics: false }, { pool: silentPool }, { signal: signalAbortingAtCheck(2) }),
      GatewayError,
      GatewayErrorCode.ABORTED,
      {
        reason: 'stopped while starting',
      },
    );
  });

  for (const at of [1, 2]) {
    it(`listen: a signal aborted at its check ${at} rejects with ABORTED and the port is free again`, async () => {
      const port = await freePort();
      const gw = await Gateway.create({ host: '127.0.0.1', port, metrics: false, refreshIntervalMs: 0 }, { pool: silentPool });
      try {
        await expectCodeAsync(gw.listen({ signal: signalAbortingAtCheck(at) }), GatewayError, GatewayErrorCode.ABORTED);
        expect(await portIsFree(port)).to.equal(true);
      } finally {
        await gw.close();
      }
    });
  }

  it('listen: a signal that never aborts starts it', async () => {
    const gw = await Gateway.create({ host: '127.0.0.1', port: 0, metrics: false, refreshIntervalMs: 0 }, { pool: silentPool });
    try {
      expect(await gw.listen({ signal: new AbortController().signal })).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await gw.close();
    }
  });
});
