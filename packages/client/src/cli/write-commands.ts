/**
 * The quire commands that build, sign and submit writes and actions: one typed definition per type (its name, help,
 * options and how its request is built), registered by one function.
 */
import { Option, type Command } from 'commander';
import { Role, type Request } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';
import * as b from '../requests/builders.js';
import { given, intOf, jsonArg, jsonObjectArg, listArg, readText, requiredArg, textArg, usage, type Context } from './context.js';
import { addLedgerAdminCommands } from './ledger-admin-commands.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>) => void;

/** One option: commander's flags (`--name <value>`, `--flag`), its help, whether it is required, its default. */
export interface OptionDef {
  flags: string;
  help?: string;
  required?: boolean;
  default?: string;
}

/** The parsed options of a command, by the names of its option definitions. */
export type Args<O extends string> = { readonly [K in O]?: string | boolean };

/**
 * One write command. `options` is keyed by the attribute commander parses each flag into (`--client-ip` ->
 * `clientIp`; registration refuses a key that differs), so `check` and `build` read only options the command has.
 */
export interface WriteCommand<O extends string = string> {
  name: string;
  description: string;
  options: { readonly [K in O]: OptionDef };
  /** Usage checks run before the signing key is loaded or the pool opened (ClientError INVALID_ARGUMENT). */
  check?: (o: Args<O>) => void;
  /** The unsigned request, from the options and the submitter's DID. */
  build: (o: Args<O>, submitter: string) => Request;
}

/** A definition with its option names inferred from `options`. */
function command<O extends string>(c: WriteCommand<O>): WriteCommand {
  return c as unknown as WriteCommand;
}

/** `--role`: a role name, a code, or "" / NONE for no role (null). */
const ROLE_NAMES: Readonly<Record<string, string | null>> = { ...Role, '': null, NONE: null };
export function roleArg(v: string): string | null {
  const k = v.toUpperCase();
  const role = Object.hasOwn(ROLE_NAMES, k) ? ROLE_NAMES[k] : undefined;
  return role === undefined ? v : role;
}

const indices = (v: string, field: string): number[] => (listArg(v) ?? []).map((x) => intOf(x, field));

const RICH_SCHEMA_COMMANDS: readonly [string, b.RichSchemaKind, string][] = [
  ['json-ld-context', 'ctx', 'write a JSON-LD context'],
  ['rich-schema', 'sch', 'write a rich schema'],
  ['rich-schema-encoding', 'enc', 'write a rich schema encoding'],
  ['rich-schema-mapping', 'map', 'write a rich schema mapping'],
  ['rich-schema-cred-def', 'cdf', 'write a rich schema credential definition'],
  ['rich-schema-pres-def', 'pdf', 'write a rich schema presentation definition'],
];

function authRulesArg(v: string): b.AuthRuleFields[] {
  const rules = jsonArg(v, '--rules');
  if (!Array.isArray(rules)) throw usage('--rules', 'a JSON list is required');
  return rules.map((r) => {
    const x = r as Record<string, unknown>;
    return {
      authType: x.auth_type,
      authAction: x.auth_action,
      field: x.field,
      ...(x.old_value !== undefined ? { oldValue: x.old_value } : {}),
      newValue: x.new_value,
      constraint: x.constraint,
    } as b.AuthRuleFields;
  });
}

const taaText = (o: Args<'text' | 'textFile'>): string | undefined => (typeof o.textFile === 'string' ? readText(o.textFile, '--text-file') : textArg(o.text));

/** Every write and action command but the ledger-administration ones (ledger-admin-commands.ts). */
export const WRITE_COMMANDS: readonly WriteCommand[] = [
  command({
    name: 'nym',
    description: 'create or update a DID (NYM)',
    options: {
      dest: { flags: '--dest <did>', required: true },
      verkey: { flags: '--verkey <verkey>' },
      role: { flags: '--role <role>', help: 'TRUSTEE, STEWARD, ENDORSER, NETWORK_MONITOR, a code, or "" for none' },
      alias: { flags: '--alias <alias>' },
      diddoc: { flags: '--diddoc <json>', help: 'diddocContent (JSON or @file)' },
      version: { flags: '--version <n>', help: 'DID version 0, 1 or 2' },
    },
    build: (o, submitter) =>
      b.buildNymRequest({
        submitter,
        dest: requiredArg(o.dest, '--dest'),
        ...given('verkey', o.verkey, (v) => v),
        ...given('role', o.role, roleArg),
        ...given('alias', o.alias, (v) => v),
        ...given('diddocContent', o.diddoc, (v) => jsonObjectArg(v, '--diddoc')),
        ...given('version', o.version, (v) => intOf(v, '--version') as 0 | 1 | 2),
      }),
  }),
  command({
    name: 'attrib',
    description: 'set an attribute of a DID',
    options: {
      dest: { flags: '--dest <did>', required: true },
      raw: { flags: '--raw <json>', help: 'one attribute as a JSON object (or @file)' },
      enc: { flags: '--enc <text>' },
      hash: { flags: '--hash <sha256hex>' },
    },
    build: (o, submitter) =>
      b.buildAttribRequest({
        submitter,
        dest: requiredArg(o.dest, '--dest'),
        ...given('raw', o.raw, (v) => jsonObjectArg(v, '--raw')),
        ...given('enc', o.enc, (v) => v),
        ...given('hash', o.hash, (v) => v),
      }),
  }),
  command({
    name: 'schema',
    description: 'write a schema',
    options: {
      name: { flags: '--name <name>', required: true },
      version: { flags: '--version <version>', required: true },
      attrs: { flags: '--attrs <names>', help: 'comma-separated attribute names', required: true },
    },
    build: (o, submitter) =>
      b.buildSchemaRequest({
        submitter,
        name: requiredArg(o.name, '--name'),
        version: requiredArg(o.version, '--version'),
        attrNames: listArg(requiredArg(o.attrs, '--attrs')) ?? [],
      }),
  }),
  command({
    name: 'cred-def',
    description: 'write a credential definition (CLAIM_DEF)',
    options: {
      ref: { flags: '--ref <seqNo>', help: 'seqNo of the schema', required: true },
      tag: { flags: '--tag <tag>' },
      primary: { flags: '--primary <json>', help: 'the primary key (JSON or @file)', required: true },
      revocation: { flags: '--revocation <json>' },
    },
    build: (o, submitter) =>
      b.buildCredDefRequest({
        submitter,
        ref: intOf(requiredArg(o.ref, '--ref'), '--ref'),
        ...given('tag', o.tag, (v) => v),
        data: {
          primary: jsonObjectArg(requiredArg(o.primary, '--primary'), '--primary'),
          ...given('revocation', o.revocation, (v) => jsonObjectArg(v, '--revocation')),
        },
      }),
  }),
  command({
    name: 'revoc-reg-def',
    description: 'write a revocation registry definition',
    options: {
      credDefId: { flags: '--cred-def-id <id>', required: true },
      tag: { flags: '--tag <tag>', required: true },
      issuanceType: { flags: '--issuance-type <type>', help: 'ISSUANCE_BY_DEFAULT or ISSUANCE_ON_DEMAND', default: 'ISSUANCE_BY_DEFAULT' },
      maxCredNum: { flags: '--max-cred-num <n>', required: true },
      publicKeys: { flags: '--public-keys <json>', required: true },
      tailsHash: { flags: '--tails-hash <hash>', required: true },
      tailsLocation: { flags: '--tails-location <url>', required: true },
    },
    build: (o, submitter) =>
      b.buildRevocRegDefRequest({
        submitter,
        credDefId: requiredArg(o.credDefId, '--cred-def-id'),
        tag: requiredArg(o.tag, '--tag'),
        value: {
          issuanceType: requiredArg(o.issuanceType, '--issuance-type') as 'ISSUANCE_BY_DEFAULT',
          maxCredNum: intOf(requiredArg(o.maxCredNum, '--max-cred-num'), '--max-cred-num'),
          publicKeys: jsonObjectArg(requiredArg(o.publicKeys, '--public-keys'), '--public-keys'),
          tailsHash: requiredArg(o.tailsHash, '--tails-hash'),
          tailsLocation: requiredArg(o.tailsLocation, '--tails-location'),
        },
      }),
  }),
  command({
    name: 'revoc-reg-entry',
    description: 'write a revocation registry entry',
    options: {
      revocRegDefId: { flags: '--revoc-reg-def-id <id>', required: true },
      accum: { flags: '--accum <accum>', required: true },
      prevAccum: { flags: '--prev-accum <accum>' },
      issued: { flags: '--issued <list>', help: 'comma-separated indices' },
      revoked: { flags: '--revoked <list>', help: 'comma-separated indices' },
    },
    build: (o, submitter) =>
      b.buildRevocRegEntryRequest({
        submitter,
        revocRegDefId: requiredArg(o.revocRegDefId, '--revoc-reg-def-id'),
        value: {
          accum: requiredArg(o.accum, '--accum'),
          ...given('prevAccum', o.prevAccum, (v) => v),
          ...given('issued', o.issued, (v) => indices(v, '--issued')),
          ...given('revoked', o.revoked, (v) => indices(v, '--revoked')),
        },
      }),
  }),
  ...RICH_SCHEMA_COMMANDS.map(([name, kind, description]) =>
    command({
      name,
      description,
      options: {
        id: { flags: '--id <id>', required: true },
        content: { flags: '--content <json>', help: 'the object (JSON or @file)', required: true },
        name: { flags: '--name <rsName>', required: true },
        version: { flags: '--version <rsVersion>', required: true },
        ver: { flags: '--ver <ver>', help: 'payload version' },
      },
      build: (o, submitter) =>
        b.buildRichSchemaRequest({
          submitter,
          kind,
          id: requiredArg(o.id, '--id'),
          content: jsonObjectArg(requiredArg(o.content, '--content'), '--content'),
          rsName: requiredArg(o.name, '--name'),
          rsVersion: requiredArg(o.version, '--version'),
          ...given('ver', o.ver, (v) => v),
        }),
    }),
  ),
  command({
    name: 'node',
    description: 'add or update a node (NODE)',
    options: {
      dest: { flags: '--dest <verkey>', help: "the node's Ed25519 verkey", required: true },
      alias: { flags: '--alias <alias>', required: true },
      clientIp: { flags: '--client-ip <ip>' },
      clientPort: { flags: '--client-port <port>' },
      nodeIp: { flags: '--node-ip <ip>' },
      nodePort: { flags: '--node-port <port>' },
      services: { flags: '--services <list>', help: 'VALIDATOR, or "" to demote' },
      blskey: { flags: '--blskey <b58>' },
      blskeyPop: { flags: '--blskey-pop <b58>' },
    },
    build: (o, submitter) =>
      b.buildNodeRequest({
        submitter,
        dest: requiredArg(o.dest, '--dest'),
        data: {
          alias: requiredArg(o.alias, '--alias'),
          ...given('client_ip', o.clientIp, (v) => v),
          ...given('client_port', o.clientPort, (v) => intOf(v, '--client-port')),
          ...given('node_ip', o.nodeIp, (v) => v),
          ...given('node_port', o.nodePort, (v) => intOf(v, '--node-port')),
          ...given('services', o.services, (v) => listArg(v) ?? []),
          ...given('blskey', o.blskey, (v) => v),
          ...given('blskey_pop', o.blskeyPop, (v) => v),
        },
      }),
  }),
  command({
    name: 'pool-upgrade',
    description: 'schedule or cancel a pool upgrade',
    options: {
      name: { flags: '--name <name>', required: true },
      version: { flags: '--version <version>', required: true },
      action: { flags: '--action <action>', help: 'start or cancel', required: true },
      sha256: { flags: '--sha256 <hex>', required: true },
      schedule: { flags: '--schedule <json>', help: 'node id -> ISO-8601 time (JSON or @file)' },
      upgradeTimeout: { flags: '--upgrade-timeout <minutes>' },
      justification: { flags: '--justification <text>' },
      reinstall: { flags: '--reinstall' },
      force: { flags: '--force' },
      package: { flags: '--package <name>' },
    },
    build: (o, submitter) =>
      b.buildPoolUpgradeRequest({
        submitter,
        name: requiredArg(o.name, '--name'),
        version: requiredArg(o.version, '--version'),
        action: requiredArg(o.action, '--action') as 'start',
        sha256: requiredArg(o.sha256, '--sha256'),
        ...given('schedule', o.schedule, (v) => jsonObjectArg(v, '--schedule') as Record<string, string>),
        ...given('timeout', o.upgradeTimeout, (v) => intOf(v, '--upgrade-timeout')),
        ...given('justification', o.justification, (v) => v),
        reinstall: o.reinstall === true,
        force: o.force === true,
        ...given('package', o.package, (v) => v),
      }),
  }),
  command({
    name: 'pool-config',
    description: 'make the pool writable or read-only',
    options: { writes: { flags: '--writes <bool>', help: 'true or false', required: true }, force: { flags: '--force' } },
    check: (o) => {
      if (o.writes !== 'true' && o.writes !== 'false') throw usage('--writes', 'true or false');
    },
    build: (o, submitter) => b.buildPoolConfigRequest({ submitter, writes: o.writes === 'true', force: o.force === true }),
  }),
  command({
    name: 'pool-restart',
    description: 'restart the pool nodes (an action: every node answers on its own)',
    options: {
      action: { flags: '--action <action>', help: 'start or cancel', required: true },
      datetime: { flags: '--datetime <iso>', help: 'when; absent or "0" = now' },
    },
    build: (o, submitter) =>
      b.buildPoolRestartRequest({ submitter, action: requiredArg(o.action, '--action') as 'start', ...given('datetime', o.datetime, (v) => v) }),
  }),
  command({
    name: 'validator-info',
    description: 'ask every node for its own information (an action: one reply per node, nothing is written)',
    options: {},
    build: (_o, submitter) => b.buildValidatorInfoRequest({ submitter }),
  }),
  command({
    name: 'auth-rule',
    description: 'change one authorization rule',
    options: {
      txnType: { flags: '--txn-type <code>', help: 'auth_type: the type code, e.g. 1', required: true },
      action: { flags: '--action <action>', help: 'ADD or EDIT', required: true },
      field: { flags: '--field <field>', required: true },
      oldValue: { flags: '--old-value <value>' },
      newValue: { flags: '--new-value <value>', required: true },
      constraint: { flags: '--constraint <json>', help: 'the constraint (JSON or @file)', required: true },
    },
    build: (o, submitter) =>
      b.buildAuthRuleRequest({
        submitter,
        authType: requiredArg(o.txnType, '--txn-type'),
        authAction: requiredArg(o.action, '--action') as 'ADD',
        field: requiredArg(o.field, '--field'),
        ...given('oldValue', o.oldValue, (v) => v),
        newValue: requiredArg(o.newValue, '--new-value'),
        constraint: jsonObjectArg(requiredArg(o.constraint, '--constraint'), '--constraint'),
      }),
  }),
  command({
    name: 'auth-rules',
    description: 'change several authorization rules in one txn',
    options: {
      rules: { flags: '--rules <json>', help: 'list of {auth_type, auth_action, field, [old_value], new_value, constraint} (JSON or @file)', required: true },
    },
    check: (o) => void authRulesArg(requiredArg(o.rules, '--rules')),
    build: (o, submitter) => b.buildAuthRulesRequest({ submitter, rules: authRulesArg(requiredArg(o.rules, '--rules')) }),
  }),
  command({
    name: 'taa',
    description: 'write a transaction author agreement (or retire one)',
    options: {
      version: { flags: '--version <version>', required: true },
      text: { flags: '--text <text>' },
      textFile: { flags: '--text-file <file>' },
      ratificationTs: { flags: '--ratification-ts <ts>' },
      retirementTs: { flags: '--retirement-ts <ts>' },
    },
    check: (o) => void taaText(o),
    build: (o, submitter) => {
      const text = taaText(o);
      return b.buildTxnAuthorAgreementRequest({
        submitter,
        version: requiredArg(o.version, '--version'),
        ...(text !== undefined ? { text } : {}),
        ...given('ratificationTs', o.ratificationTs, (v) => intOf(v, '--ratification-ts')),
        ...given('retirementTs', o.retirementTs, (v) => intOf(v, '--retirement-ts')),
      });
    },
  }),
  command({
    name: 'taa-aml',
    description: 'write the acceptance mechanisms list',
    options: {
      version: { flags: '--version <version>', required: true },
      aml: { flags: '--aml <json>', help: 'label -> description (JSON or @file)', required: true },
      context: { flags: '--context <text>' },
    },
    build: (o, submitter) =>
      b.buildTxnAuthorAgreementAmlRequest({
        submitter,
        version: requiredArg(o.version, '--version'),
        aml: jsonObjectArg(requiredArg(o.aml, '--aml'), '--aml') as Record<string, string>,
        ...given('amlContext', o.context, (v) => v),
      }),
  }),
];

/** Adds `c` to `program`: its options, then check, build, sign and submit (or print, with --dry-run / --endorser). */
export function registerWriteCommand(program: Command, run: Run, c: WriteCommand): void {
  const cmd = program.command(c.name).description(c.description);
  for (const [key, d] of Object.entries<OptionDef>(c.options)) {
    const opt = new Option(d.flags, d.help);
    if (opt.attributeName() !== key) {
      throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, {
        field: `${c.name} ${d.flags}`,
        reason: `defined as "${key}", parsed as "${opt.attributeName()}"`,
      });
    }
    if (d.required === true) opt.makeOptionMandatory();
    if (d.default !== undefined) opt.default(d.default);
    cmd.addOption(opt);
  }
  run(cmd, (ctx, o) => {
    c.check?.(o);
    return ctx.write((submitter) => c.build(o, submitter));
  });
}

export function addWriteCommands(program: Command, run: Run): void {
  for (const c of WRITE_COMMANDS) registerWriteCommand(program, run, c);
  // TXN_AUTHOR_AGREEMENT_DISABLE, LEDGERS_FREEZE, GET_FROZEN_LEDGERS (ledger-admin-commands.ts)
  addLedgerAdminCommands(program, run);
}
