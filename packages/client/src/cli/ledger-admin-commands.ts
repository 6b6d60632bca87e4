/**
 * The quire commands of the Indy ledger-administration extensions (requests.md 7.2, 7.3): `taa-disable`
 * (TXN_AUTHOR_AGREEMENT_DISABLE), `ledgers-freeze` (LEDGERS_FREEZE) and `get-frozen-ledgers`.
 *
 * LEDGERS_FREEZE needs three trustee signatures by default: `ledgers-freeze` signs in the multi-signature form
 * with the command's key and every `--cosigner-key-file`, then submits; with `--dry-run` it prints the request,
 * to which other trustees add theirs with `quire sign --multi` before `quire submit`.
 */
import type { Command } from 'commander';
import { stringifyJson } from '@quire/common';
import * as b from '../requests/builders.js';
import { multiSignRequest } from '../requests/sign.js';
import { intOf, listArg, loadKey, usage, type Context } from './context.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | string[] | undefined>) => Promise<void>) => void;

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/** Ledger ids from `--ledgers 909,910`: integers >= 4 (the base ledgers cannot be frozen). */
export function ledgerIdsArg(v: string | undefined): number[] {
  const items = listArg(v) ?? [];
  if (items.length === 0) throw usage('--ledgers', 'one or more ledger ids, comma-separated');
  const ids = items.map((x) => intOf(x, '--ledgers'));
  if (ids.some((id) => b.BASE_LEDGER_IDS.includes(id))) throw usage('--ledgers', "(0, 1, 2, 3) ledgers can't be frozen");
  return ids;
}

export function addLedgerAdminCommands(program: Command, run: Run): void {
  run(program.command('taa-disable').description('disable the transaction author agreement (every version retired; trustee)'), (ctx) =>
    ctx.write((submitter) => b.buildDisableAllTxnAuthorAgreementsRequest({ submitter })),
  );
  run(
    program
      .command('ledgers-freeze')
      .description('freeze plugin or unused ledgers (3 trustee signatures by default; no unfreeze)')
      .requiredOption('--ledgers <ids>', 'comma-separated ledger ids (not 0-3)')
      .option('--cosigner-key-file <file>', 'another signer: a file holding its seed (repeatable)', collect),
    async (ctx, o) => {
      const ids = ledgerIdsArg(typeof o.ledgers === 'string' ? o.ledgers : undefined);
      const key = loadKey(ctx.globals);
      let req = multiSignRequest(b.buildLedgersFreezeRequest({ submitter: key.did, ledgersIds: ids }), key);
      for (const file of Array.isArray(o.cosignerKeyFile) ? o.cosignerKeyFile : []) req = multiSignRequest(req, loadKey({ keyFile: file }));
      if (ctx.globals.dryRun === true) return ctx.io.out(stringifyJson(req));
      await ctx.send(req);
    },
  );
  run(program.command('get-frozen-ledgers').description('read the frozen ledgers with their roots and sizes (verified by state proof)'), (ctx) =>
    ctx.read(b.buildGetFrozenLedgersRequest()),
  );
}
