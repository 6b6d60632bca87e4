// An observer's bound on the announcements it remembers is a positive integer: any other is refused at start as a bad
// argument, before anything is opened, where it made a memory that drops nothing or everything.
import { randomBytes } from 'node:crypto';
import { expectCodeAsync } from '@quire/testing';
import { BatchFollower, ClientError, ClientErrorCode } from '../../src/index.js';
import { poolGenesis } from './fixtures.js';

describe("an observer's maxPendingAnnouncements", () => {
  it('is refused at start with INVALID_ARGUMENT naming the field when it is not a positive integer', async () => {
    const genesis = poolGenesis({ nodePorts: [1, 2, 3, 4] });
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expectCodeAsync(
        BatchFollower.start(genesis, { seed: randomBytes(32), maxPendingAnnouncements: bad }),
        ClientError,
        ClientErrorCode.INVALID_ARGUMENT,
        {
          field: 'maxPendingAnnouncements',
        },
      );
    }
  });
});
