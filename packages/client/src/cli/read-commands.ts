/** The quire commands for reads, raw requests (submit, sign), keys (did new) and the pool (pool status). */
import type { Command } from 'commander';
import { isPlainObject, LedgerId, parseJson, stringifyJson, type Request } from '@quire/common';
import * as b from '../requests/builders.js';
import { DidKey } from '../requests/did.js';
import { endorseRequest, multiSignRequest, signRequest } from '../requests/sign.js';
import { given, intArg, intOf, loadKey, readText, requiredArg, textArg, usage, type Context } from './context.js';
import { CliExit, ExitCode } from './diagnostics.js';
import { openCurrentWallet } from './wallet.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>) => void;

/** `--ledger`: a built-in ledger by its name (pool, domain, config, audit) or its number. */
const LEDGERS: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(LedgerId).flatMap(([name, id]) => [
    [name.toLowerCase(), id],
    [String(id), id],
  ]),
);

function readRequestFile(path: string): { request: Request; text: string } {
  const text = readText(path, '--request-file').trim();
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (e) {
    throw usage('--request-file', `not valid JSON (${(e as { code?: string }).code ?? 'parse error'})`);
  }
  if (!isPlainObject(v) || !isPlainObject(v.operation)) throw usage('--request-file', 'not a request object with an operation');
  return { request: v as unknown as Request, text };
}

export function addReadCommands(program: Command, run: Run): void {
  const read = (name: string, desc: string): Command => program.command(name).description(desc);
  const historic = (o: Record<string, unknown>): { seqNo?: number; timestamp?: number } => ({
    ...given('seqNo', o.seqNo, (v) => intOf(v, '--seq-no')),
    ...given('timestamp', o.timestamp, (v) => intOf(v, '--timestamp')),
  });

  run(read('get-nym', 'read a DID').requiredOption('--dest <did>').option('--seq-no <n>').option('--timestamp <ts>'), (ctx, o) =>
    ctx.read(b.buildGetNymRequest({ dest: requiredArg(o.dest, '--dest'), ...historic(o) })),
  );
  run(
    read('get-attrib', 'read an attribute')
      .requiredOption('--dest <did>')
      .option('--raw <name>', 'attribute name')
      .option('--enc <text>')
      .option('--hash <hex>')
      .option('--seq-no <n>')
      .option('--timestamp <ts>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetAttribRequest({
          dest: requiredArg(o.dest, '--dest'),
          ...given('raw', o.raw, (v) => v),
          ...given('enc', o.enc, (v) => v),
          ...given('hash', o.hash, (v) => v),
          ...historic(o),
        }),
      ),
  );
  run(
    read('get-schema', 'read a schema').requiredOption('--dest <did>', 'author').requiredOption('--name <name>').requiredOption('--version <version>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetSchemaRequest({ dest: requiredArg(o.dest, '--dest'), name: requiredArg(o.name, '--name'), version: requiredArg(o.version, '--version') }),
      ),
  );
  run(
    read('get-cred-def', 'read a credential definition')
      .requiredOption('--origin <did>')
      .requiredOption('--ref <seqNo>')
      .option('--tag <tag>')
      .option('--signature-type <type>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetCredDefRequest({
          origin: requiredArg(o.origin, '--origin'),
          ref: intOf(requiredArg(o.ref, '--ref'), '--ref'),
          ...given('tag', o.tag, (v) => v),
          ...given('signatureType', o.signatureType, (v) => v),
        }),
      ),
  );
  run(read('get-revoc-reg-def', 'read a revocation registry definition').requiredOption('--id <id>'), (ctx, o) =>
    ctx.read(b.buildGetRevocRegDefRequest({ id: requiredArg(o.id, '--id') })),
  );
  run(
    read('get-revoc-reg', 'read a revocation registry accumulator as of a time').requiredOption('--id <revocRegDefId>').requiredOption('--timestamp <ts>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetRevocRegRequest({ revocRegDefId: requiredArg(o.id, '--id'), timestamp: intOf(requiredArg(o.timestamp, '--timestamp'), '--timestamp') }),
      ),
  );
  run(
    read('get-revoc-reg-delta', 'read a revocation delta between two times')
      .requiredOption('--id <revocRegDefId>')
      .option('--from <ts>')
      .requiredOption('--to <ts>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetRevocRegDeltaRequest({
          revocRegDefId: requiredArg(o.id, '--id'),
          ...given('from', o.from, (v) => intOf(v, '--from')),
          to: intOf(requiredArg(o.to, '--to'), '--to'),
        }),
      ),
  );
  run(
    read('get-auth-rule', 'read one authorization rule, or all')
      .option('--txn-type <code>')
      .option('--action <action>')
      .option('--field <field>')
      .option('--old-value <value>')
      .option('--new-value <value>'),
    (ctx, o) =>
      ctx.read(
        b.buildGetAuthRuleRequest({
          ...given('authType', o.txnType, (v) => v),
          ...given('authAction', o.action, (v) => v as 'ADD'),
          ...given('field', o.field, (v) => v),
          ...given('oldValue', o.oldValue, (v) => v),
          ...given('newValue', o.newValue, (v) => v),
        }),
      ),
  );
  run(read('get-taa', 'read the transaction author agreement').option('--version <version>').option('--digest <hex>').option('--timestamp <ts>'), (ctx, o) =>
    ctx.read(
      b.buildGetTxnAuthorAgreementRequest({
        ...given('version', o.version, (v) => v),
        ...given('digest', o.digest, (v) => v),
        ...given('timestamp', o.timestamp, (v) => intOf(v, '--timestamp')),
      }),
    ),
  );
  run(read('get-taa-aml', 'read the acceptance mechanisms').option('--version <version>').option('--timestamp <ts>'), (ctx, o) =>
    ctx.read(
      b.buildGetAcceptanceMechanismsRequest({ ...given('version', o.version, (v) => v), ...given('timestamp', o.timestamp, (v) => intOf(v, '--timestamp')) }),
    ),
  );
  run(
    read('get-txn', 'read a transaction by ledger and seqNo')
      .requiredOption('--ledger <ledger>', 'pool, domain, config, audit, 0-3 or a plugin ledger id (1000 and above)')
      .requiredOption('--seq-no <n>'),
    (ctx, o) => {
      const name = requiredArg(o.ledger, '--ledger').toLowerCase();
      const plugin = /^[1-9][0-9]{3,9}$/.test(name) && Number(name) <= 0x7fff_ffff ? Number(name) : undefined;
      const ledgerId = Object.hasOwn(LEDGERS, name) ? LEDGERS[name] : plugin;
      if (ledgerId === undefined) throw usage('--ledger', 'pool, domain, config, audit, 0-3 or a plugin ledger id (1000 and above)');
      return ctx.read(b.buildGetTxnRequest({ ledgerId, seqNo: intOf(requiredArg(o.seqNo, '--seq-no'), '--seq-no') }));
    },
  );
  run(
    read('get-rich-schema', 'read a rich schema object by id or by type, name and version')
      .option('--id <id>')
      .option('--rs-type <type>')
      .option('--rs-name <name>')
      .option('--rs-version <version>'),
    (ctx, o) => {
      if (o.id !== undefined) return ctx.read(b.buildGetRichSchemaObjectByIdRequest({ id: requiredArg(o.id, '--id') }));
      if (o.rsType === undefined || o.rsName === undefined || o.rsVersion === undefined)
        throw usage('--id', 'give --id, or --rs-type, --rs-name and --rs-version');
      return ctx.read(
        b.buildGetRichSchemaObjectByMetadataRequest({
          rsType: textArg(o.rsType) as b.RichSchemaKind,
          rsName: requiredArg(o.rsName, '--rs-name'),
          rsVersion: requiredArg(o.rsVersion, '--rs-version'),
        }),
      );
    },
  );

  run(
    program.command('submit').description('send a pre-built, pre-signed request JSON verbatim and print the reply').requiredOption('--request-file <file>'),
    (ctx, o) => {
      const { request, text } = readRequestFile(requiredArg(o.requestFile, '--request-file'));
      return ctx.send(request, new TextEncoder().encode(text));
    },
  );
  run(
    program
      .command('sign')
      .description("add the key's signature to a request JSON (multi-signature, endorsement) and print it")
      .requiredOption('--request-file <file>')
      .option('--multi', 'always add to signatures, even as the only signer'),
    async (ctx, o) => {
      const { request } = readRequestFile(requiredArg(o.requestFile, '--request-file'));
      const key = loadKey(ctx.globals);
      const signed =
        request.endorser === key.did ? endorseRequest(request, key) : o.multi === true ? multiSignRequest(request, key) : signRequest(request, key);
      ctx.io.out(stringifyJson(signed));
    },
  );
  const didCmd = program.command('did').description('DID keys (with --alias, kept in the wallet in use)');
  run(
    didCmd
      .command('new')
      .description('create a DID key from --seed, or a random one; with --alias, store it in the wallet in use (its seed is then not printed)')
      .option('--seed <seed>', '32 characters or 64 hex digits')
      .option('--alias <alias>', 'store the key in the wallet in use under this name (quire wallet create/open first)'),
    async (ctx, o) => {
      const seed = textArg(o.seed) ?? ctx.globals.seed;
      const key = seed !== undefined ? DidKey.fromSeed(seed) : DidKey.random();
      const info: Record<string, string> = { did: key.did, verkey: key.verkey, fullVerkey: key.fullVerkey, didIndyV2: key.didIndyV2 };
      const alias = textArg(o.alias);
      if (alias !== undefined) {
        const w = await openCurrentWallet();
        if (w === undefined) throw usage('--alias', 'no wallet in use: quire wallet create NAME (or wallet open NAME) first');
        w.addDid(alias, key);
        info.alias = alias;
        info.wallet = w.name;
      } else if (seed === undefined) info.seed = key.seedHex;
      if (ctx.globals.json === true) return ctx.io.out(stringifyJson(info));
      for (const [k, v] of Object.entries(info)) ctx.io.out(`${k.padEnd(11)} ${v}`);
      if (alias === undefined && seed === undefined) ctx.io.err('Keep the seed secret: it is the private key.');
      if (alias !== undefined) ctx.io.err(`Stored in wallet ${info.wallet}; sign with it after: quire did use ${alias}`);
    },
  );
  const poolCmd = program.command('pool').description('the pool');
  run(
    poolCmd
      .command('status')
      .description('asks every validator for the first pool txn and says who answered (exit 1 without a quorum of n-f), with the pool ledger size and root')
      .option('--refresh', 'catch up the pool ledger first'),
    async (ctx, o) => {
      const pool = await ctx.openPool();
      if (o.refresh === true && ctx.globals.refresh !== true) await pool.refresh();
      const st = pool.status();
      const timeoutMs = intArg(ctx.globals.timeout, '--timeout') ?? 10_000;
      const answers = await pool.submitAction(b.buildGetTxnRequest({ ledgerId: LedgerId.POOL, seqNo: 1 }), { timeoutMs });
      const nodes = st.validators.map((v) => {
        const a = answers.get(v.alias);
        const answered = a !== undefined && a.kind !== 'error';
        const how =
          a === undefined
            ? 'no client address'
            : a.kind === 'reply'
              ? 'answered'
              : a.kind === 'error'
                ? `no answer: ${a.error.code}${typeof a.error.data.reason === 'string' ? ` (${a.error.data.reason})` : ''}`
                : `answered with ${a.kind === 'nack' ? 'REQNACK' : 'REJECT'}: ${a.reason}`;
        return { ...v, answered, answer: how };
      });
      const answered = nodes.filter((v) => v.answered).length;
      const needed = st.n - st.f;
      const quorum = answered >= needed;
      if (ctx.globals.json === true) ctx.io.out(stringifyJson({ ...st, validators: nodes, answered, needed, quorum }));
      else {
        ctx.io.out(
          quorum ? `Pool: ${answered} of ${st.n} validators answered (quorum ${needed})` : `no quorum: ${answered} of ${st.n} answered, ${needed} needed`,
        );
        ctx.io.out(`Pool ledger: ${st.ledgerSize} txns, root ${st.root}`);
        ctx.io.out(`Validators: n=${st.n}, f=${st.f} (writes need ${st.f + 1} matching replies; proofs need ${st.n - st.f} signers)`);
        for (const v of nodes) ctx.io.out(`  ${v.alias.padEnd(12)} ${String(v.client ?? '-').padEnd(22)} bls:${v.bls ? 'yes' : 'no '} ${v.answer}`);
        if (st.demoted.length > 0) ctx.io.out(`Demoted: ${st.demoted.join(', ')}`);
      }
      if (!quorum) {
        ctx.io.err(`error: no quorum: ${answered} of ${st.n} answered, ${needed} needed`);
        throw new CliExit(ExitCode.FAILED);
      }
    },
  );
  run(poolCmd.command('refresh').description('catch up the pool ledger from the nodes'), async (ctx) => {
    const r = await (await ctx.openPool()).refresh();
    if (ctx.globals.json === true) return ctx.io.out(stringifyJson(r));
    ctx.io.out(`Pool ledger: ${r.from} -> ${r.to} txns`);
    for (const d of r.discarded) ctx.io.out(`  discarded answer of ${d.node}: ${d.reason}`);
  });
}
