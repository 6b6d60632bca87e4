/** Reconnect timing shared by the node's and the SDK's libp2p hosts. */

/** Exponential backoff with jitter: min·2^attempt capped at max, scaled by a random factor in [0.5, 1). */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 20));
  return Math.round(base * (0.5 + random() / 2));
}
