// Pool.open and Pool.fromGenesisText under an AbortSignal: aborted before the stack starts, they reject with ClientError
// ABORTED and open nothing; a signal that never aborts opens the pool as before.
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { expectCodeAsync } from '@quire/testing';
import { ClientError, ClientErrorCode } from '../../src/errors.js';
import { Pool } from '../../src/pool/pool.js';
import { poolGenesis } from './fixtures.js';

describe('Pool.open under an AbortSignal', () => {
  it('an aborted signal: ABORTED with its reason, from the genesis text and from a file', async () => {
    const ac = new AbortController();
    ac.abort(new Error('not wanted'));
    const e = await expectCodeAsync(Pool.fromGenesisText(poolGenesis(), {}, undefined, { signal: ac.signal }), ClientError, ClientErrorCode.ABORTED);
    expect(JSON.stringify(e.data)).to.contain('not wanted');
    const dir = await mkdtemp(join(tmpdir(), 'quire-pool-open-'));
    try {
      const file = join(dir, 'pool_transactions_genesis');
      await writeFile(file, poolGenesis());
      await expectCodeAsync(Pool.open(file, {}, { signal: ac.signal }), ClientError, ClientErrorCode.ABORTED);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a signal that never aborts opens the pool', async () => {
    const pool = await Pool.fromGenesisText(poolGenesis(), {}, undefined, { signal: new AbortController().signal });
    expect(pool.ledger.validators().length).to.equal(4);
    await pool.close();
  });
});
