// The bounded least-recently-used map is defined in @quire/common beside BoundedFifo, whose eviction it shares (common's
// own memos need the FIFO, and common depends on no package); crypto's verifier caches and its users import it from here
// as before.
export { LruCache } from '@quire/common';
