/** quire wallet create|open|list, did use|list, pool add|use|list: wallets of DID keys and pool profiles (wallet.ts). */
import type { Command } from 'commander';
import { stringifyJson } from '@quire/common';
import { usage, type Context } from './context.js';
import { addPool, cliHome, passphrase, readConfig, usePool, Wallet, walletNames, writeConfig } from './wallet.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>) => void;

const sub = (program: Command, name: string, description: string): Command =>
  program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);

export function addWalletCommands(program: Command, run: Run): void {
  const wallet = program.command('wallet').description(`wallets of DID keys, encrypted under a passphrase (scrypt + AES-256-GCM; files in ${cliHome()})`);
  run(
    wallet.command('create').description('create a wallet and use it (passphrase from $QUIRE_WALLET_PASSPHRASE or asked twice)').argument('<name>'),
    async (ctx) => {
      const name = String(ctx.args[0]);
      const pass = await passphrase(`passphrase for the new wallet ${name}: `);
      if (process.env.QUIRE_WALLET_PASSPHRASE === undefined && (await passphrase('again: ')) !== pass) throw usage('passphrase', 'the two passphrases differ');
      Wallet.create(name, pass);
      const c = readConfig();
      c.wallet = name;
      writeConfig(c);
      ctx.io.out(`wallet ${name} created and in use`);
    },
  );
  run(wallet.command('open').description('use a wallet (its passphrase is checked)').argument('<name>'), async (ctx) => {
    const name = String(ctx.args[0]);
    const w = Wallet.open(name, await passphrase(`passphrase of wallet ${name}: `));
    const c = readConfig();
    c.wallet = name;
    writeConfig(c);
    ctx.io.out(`wallet ${name} in use (${Object.keys(w.dids).length} DIDs)`);
  });
  run(wallet.command('list').description('the wallets (* = in use)'), async (ctx) => {
    const c = readConfig();
    const names = walletNames();
    if (ctx.globals.json === true) return ctx.io.out(stringifyJson({ wallets: names, current: c.wallet ?? null }));
    if (names.length === 0) ctx.io.out('no wallet (quire wallet create NAME)');
    for (const n of names) ctx.io.out(`${n === c.wallet ? '*' : ' '} ${n}`);
  });

  const did = sub(program, 'did', 'DID keys');
  run(did.command('use').description('sign with this DID of the wallet in use (instead of --seed)').argument('<alias>'), async (ctx) => {
    const alias = String(ctx.args[0]);
    const c = readConfig();
    if (c.wallet === undefined) throw usage('wallet', 'no wallet in use: quire wallet create NAME (or wallet open NAME) first');
    const w = Wallet.open(c.wallet, await passphrase(`passphrase of wallet ${c.wallet}: `));
    const d = w.dids[alias];
    if (d === undefined) throw usage('alias', `wallet ${c.wallet} has no DID named ${alias} (quire did list)`);
    c.dids = { ...c.dids, [c.wallet]: alias };
    writeConfig(c);
    ctx.io.out(`signing as ${alias} (${d.did}) from wallet ${c.wallet}`);
  });
  run(did.command('list').description('the DIDs of the wallet in use (* = in use)'), async (ctx) => {
    const c = readConfig();
    if (c.wallet === undefined) throw usage('wallet', 'no wallet in use: quire wallet create NAME (or wallet open NAME) first');
    const w = Wallet.open(c.wallet, await passphrase(`passphrase of wallet ${c.wallet}: `));
    const current = c.dids?.[c.wallet];
    const rows = Object.entries(w.dids).map(([alias, d]) => ({ alias, did: d.did, verkey: d.verkey, current: alias === current }));
    if (ctx.globals.json === true) return ctx.io.out(stringifyJson(rows));
    for (const r of rows) ctx.io.out(`${r.current ? '*' : ' '} ${r.alias.padEnd(16)} ${r.did} ${r.verkey}`);
  });

  const pool = sub(program, 'pool', 'the pool');
  run(
    pool.command('add').description('a pool profile: a name for a genesis file, given with --genesis (the first one added is used)').argument('<name>'),
    async (ctx) => {
      const name = String(ctx.args[0]);
      // --genesis is the global option: `quire pool add NAME --genesis FILE`
      if (ctx.globals.genesis === undefined) throw usage('--genesis', 'pool add: give the genesis file with --genesis FILE');
      const file = addPool(name, ctx.globals.genesis);
      ctx.io.out(`pool ${name}: ${file}${readConfig().pool === name ? ' (in use)' : ''}`);
    },
  );
  run(pool.command('use').description('use this pool profile when no --genesis is given').argument('<name>'), async (ctx) => {
    const name = String(ctx.args[0]);
    usePool(name);
    ctx.io.out(`pool ${name} in use`);
  });
  run(pool.command('list').description('the pool profiles (* = in use)'), async (ctx) => {
    const c = readConfig();
    if (ctx.globals.json === true) return ctx.io.out(stringifyJson({ pools: c.pools ?? {}, current: c.pool ?? null }));
    const entries = Object.entries(c.pools ?? {});
    if (entries.length === 0) ctx.io.out('no pool profile (quire pool add NAME --genesis FILE)');
    for (const [n, p] of entries) ctx.io.out(`${n === c.pool ? '*' : ' '} ${n.padEnd(16)} ${p.genesis}`);
  });
}
