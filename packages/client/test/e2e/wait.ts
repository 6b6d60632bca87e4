// Polls a probe every 25 ms until it returns a value; throws after the timeout (10 s by default): the suites' one
// helper, from @quire/testing.
export { waitFor } from '@quire/testing';
