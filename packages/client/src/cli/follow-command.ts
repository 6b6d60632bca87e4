/**
 * `quire follow`: follows the pool's ordered-batch topic as an observer (BatchFollower) and prints one compact JSON
 * line per accepted batch and per gap on stdout, until interrupted (SIGINT / SIGTERM) or `--count` batches.
 */
import type { Command } from 'commander';
import { stringifyJson } from '@quire/common';
import { BatchFollower, type FollowedBatch, type FollowGap } from '../follow/batch-follower.js';
import { intArg, intOf, listArg, loadKey, readText, requiredArg, usage, type Context } from './context.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>) => void;

const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const LEDGERS: Record<string, number> = { pool: 0, domain: 1, config: 2, audit: 3 };

function ledgerIds(v: string | undefined): Set<number> | undefined {
  const names = listArg(v);
  if (names === undefined) return undefined;
  return new Set(
    names.map((n) => {
      const id = LEDGERS[n] ?? (/^[0-9]+$/.test(n) ? Number(n) : undefined);
      if (id === undefined) throw usage('--ledger', `unknown ledger ${n} (pool, domain, config, audit or an id)`);
      return id;
    }),
  );
}

/** The JSON line of an accepted batch. */
export function batchLine(b: FollowedBatch, withTxns: boolean): string {
  return stringifyJson({
    event: 'batch',
    ledgerId: b.ledgerId,
    seqNoStart: b.seqNoStart,
    seqNoEnd: b.seqNoEnd,
    ppSeqNo: b.ppSeqNo,
    viewNo: b.viewNo,
    ppTime: b.ppTime,
    txnRootHash: b.txnRootHash,
    stateRootHash: b.stateRootHash,
    acceptedBy: b.acceptedBy,
    senders: b.senders,
    txnsOmitted: b.txnsOmitted,
    ...(withTxns && b.txns !== undefined ? { txns: b.txns } : {}),
  });
}

/** The JSON line of a gap. */
export function gapLine(g: FollowGap): string {
  return stringifyJson({ event: 'gap', ledgerId: g.ledgerId, seqNoStart: g.seqNoStart, seqNoEnd: g.seqNoEnd });
}

/** Resolves when `signal` aborts or the process gets SIGINT / SIGTERM; the handlers are removed afterwards. */
function interrupted(signal: AbortSignal | undefined): { done: Promise<void>; release: () => void } {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const all = signal === undefined ? ac.signal : AbortSignal.any([signal, ac.signal]);
  const done = new Promise<void>((resolve) => {
    if (all.aborted) resolve();
    else all.addEventListener('abort', () => resolve(), { once: true });
  });
  return {
    done,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      ac.abort();
    },
  };
}

/** Adds `follow`; `stop` (tests) ends it as SIGINT does. */
export function addFollowCommand(program: Command, run: Run, stop?: AbortSignal): void {
  run(
    program
      .command('follow')
      .description(
        "follow ordered batches as an observer (the key is the observer key listed in the validators' observers config): one JSON line per accepted batch and per gap, until interrupted",
      )
      .option('--ledger <ids>', 'only these ledgers: pool, domain, config, audit or ids, comma-separated')
      .option('--txns', "include each batch's committed txns")
      .option('--count <n>', 'stop after this many batches')
      .option('--name <alias>', 'observer name in log lines', 'observer')
      .option('--host <ip>', 'local listen address (validators never dial it)', '127.0.0.1')
      .option('--port <n>', 'local listen port (0: any)', '0')
      .option('--reorder-timeout <ms>', 'how long a batch after a missing one is held before the gap is reported', '3000'),
    async (ctx, o) => {
      const key = loadKey(ctx.globals);
      const file = ctx.genesisFile();
      const ledgers = ledgerIds(s(o.ledger));
      const count = intArg(s(o.count), '--count');
      const port = intOf(requiredArg(o.port, '--port'), '--port');
      if (port > 65535) throw usage('--port', 'a port is at most 65535');
      const reorderTimeoutMs = intOf(requiredArg(o.reorderTimeout, '--reorder-timeout'), '--reorder-timeout');
      const withTxns = o.txns === true;
      const wait = interrupted(stop);
      let follower: BatchFollower | undefined;
      try {
        follower = await BatchFollower.start(readText(file, '--genesis'), {
          seed: Buffer.from(key.seedHex, 'hex'),
          name: requiredArg(o.name, '--name'),
          host: requiredArg(o.host, '--host'),
          port,
          reorderTimeoutMs,
        });
        const f = follower;
        let printed = 0;
        const enough = new Promise<void>((resolve) => {
          if (count === 0) resolve();
          f.on('batch', (b) => {
            if (ledgers !== undefined && !ledgers.has(b.ledgerId)) return;
            if (count !== undefined && printed >= count) return;
            ctx.io.out(batchLine(b, withTxns));
            if (++printed === count) resolve();
          });
        });
        f.on('gap', (g) => {
          if (ledgers === undefined || ledgers.has(g.ledgerId)) ctx.io.out(gapLine(g));
        });
        ctx.io.err(`following ${f.topic} as ${f.peerId} (observer verkey ${key.fullVerkey}); interrupt to stop`);
        await Promise.race([wait.done, enough]);
        const st = f.stats();
        ctx.io.err(
          `stopped: ${printed} batches printed; received ${st.received}, accepted ${st.accepted}, duplicates ${st.duplicates}, gaps ${st.gaps}, dropped ${stringifyJson(st.dropped)}`,
        );
      } finally {
        wait.release();
        await follower?.close();
      }
    },
  );
}
