/** The quire commands that build, sign and submit writes and actions (one per type). */
import type { Command } from 'commander';
import type { Request } from '@quire/common';
import * as b from '../requests/builders.js';
import { intArg, jsonArg, jsonObjectArg, listArg, readText, usage, type Context } from './context.js';
import { addLedgerAdminCommands } from './ledger-admin-commands.js';

type Run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>) => void;

const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function role(v: string | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  const names: Record<string, string | null> = { TRUSTEE: '0', STEWARD: '2', ENDORSER: '101', NETWORK_MONITOR: '201', '': null, NONE: null };
  const k = v.toUpperCase();
  return k in names ? names[k]! : v;
}

export function addWriteCommands(program: Command, run: Run): void {
  const write = (name: string, desc: string): Command => program.command(name).description(desc);
  const submitWith = (ctx: Context, build: (submitter: string) => Request): Promise<void> => ctx.write(build);

  run(
    write('nym', 'create or update a DID (NYM)').requiredOption('--dest <did>').option('--verkey <verkey>').option('--role <role>', 'TRUSTEE, STEWARD, ENDORSER, NETWORK_MONITOR, a code, or "" for none').option('--alias <alias>').option('--diddoc <json>', 'diddocContent (JSON or @file)').option('--version <n>', 'DID version 0, 1 or 2'),
    (ctx, o) =>
      submitWith(ctx, (submitter) =>
        b.buildNymRequest({
          submitter,
          dest: s(o.dest)!,
          ...(o.verkey !== undefined ? { verkey: s(o.verkey) } : {}),
          ...(o.role !== undefined ? { role: role(s(o.role)) } : {}),
          ...(o.alias !== undefined ? { alias: s(o.alias)! } : {}),
          ...(o.diddoc !== undefined ? { diddocContent: jsonObjectArg(s(o.diddoc)!, '--diddoc') } : {}),
          ...(o.version !== undefined ? { version: intArg(s(o.version), '--version') as 0 | 1 | 2 } : {}),
        }),
      ),
  );
  run(write('attrib', 'set an attribute of a DID').requiredOption('--dest <did>').option('--raw <json>', 'one attribute as a JSON object (or @file)').option('--enc <text>').option('--hash <sha256hex>'), (ctx, o) =>
    submitWith(ctx, (submitter) =>
      b.buildAttribRequest({
        submitter,
        dest: s(o.dest)!,
        ...(o.raw !== undefined ? { raw: jsonObjectArg(s(o.raw)!, '--raw') } : {}),
        ...(o.enc !== undefined ? { enc: s(o.enc)! } : {}),
        ...(o.hash !== undefined ? { hash: s(o.hash)! } : {}),
      }),
    ),
  );
  run(write('schema', 'write a schema').requiredOption('--name <name>').requiredOption('--version <version>').requiredOption('--attrs <names>', 'comma-separated attribute names'), (ctx, o) =>
    submitWith(ctx, (submitter) => b.buildSchemaRequest({ submitter, name: s(o.name)!, version: s(o.version)!, attrNames: listArg(s(o.attrs)) ?? [] })),
  );
  run(write('cred-def', 'write a credential definition (CLAIM_DEF)').requiredOption('--ref <seqNo>', 'seqNo of the schema').option('--tag <tag>').requiredOption('--primary <json>', 'the primary key (JSON or @file)').option('--revocation <json>'), (ctx, o) =>
    submitWith(ctx, (submitter) =>
      b.buildCredDefRequest({
        submitter,
        ref: intArg(s(o.ref), '--ref')!,
        ...(o.tag !== undefined ? { tag: s(o.tag)! } : {}),
        data: { primary: jsonObjectArg(s(o.primary)!, '--primary'), ...(o.revocation !== undefined ? { revocation: jsonObjectArg(s(o.revocation)!, '--revocation') } : {}) },
      }),
    ),
  );
  run(
    write('revoc-reg-def', 'write a revocation registry definition')
      .requiredOption('--cred-def-id <id>')
      .requiredOption('--tag <tag>')
      .option('--issuance-type <type>', 'ISSUANCE_BY_DEFAULT or ISSUANCE_ON_DEMAND', 'ISSUANCE_BY_DEFAULT')
      .requiredOption('--max-cred-num <n>')
      .requiredOption('--public-keys <json>')
      .requiredOption('--tails-hash <hash>')
      .requiredOption('--tails-location <url>'),
    (ctx, o) =>
      submitWith(ctx, (submitter) =>
        b.buildRevocRegDefRequest({
          submitter,
          credDefId: s(o.credDefId)!,
          tag: s(o.tag)!,
          value: {
            issuanceType: s(o.issuanceType) as 'ISSUANCE_BY_DEFAULT',
            maxCredNum: intArg(s(o.maxCredNum), '--max-cred-num')!,
            publicKeys: jsonObjectArg(s(o.publicKeys)!, '--public-keys'),
            tailsHash: s(o.tailsHash)!,
            tailsLocation: s(o.tailsLocation)!,
          },
        }),
      ),
  );
  run(write('revoc-reg-entry', 'write a revocation registry entry').requiredOption('--revoc-reg-def-id <id>').requiredOption('--accum <accum>').option('--prev-accum <accum>').option('--issued <list>', 'comma-separated indices').option('--revoked <list>', 'comma-separated indices'), (ctx, o) => {
    const idx = (v: unknown, f: string): number[] | undefined => listArg(s(v))?.map((x) => intArg(x, f)!);
    return submitWith(ctx, (submitter) =>
      b.buildRevocRegEntryRequest({
        submitter,
        revocRegDefId: s(o.revocRegDefId)!,
        value: {
          accum: s(o.accum)!,
          ...(o.prevAccum !== undefined ? { prevAccum: s(o.prevAccum)! } : {}),
          ...(o.issued !== undefined ? { issued: idx(o.issued, '--issued')! } : {}),
          ...(o.revoked !== undefined ? { revoked: idx(o.revoked, '--revoked')! } : {}),
        },
      }),
    );
  });
  const rich: [string, b.RichSchemaKind, string][] = [
    ['json-ld-context', 'ctx', 'write a JSON-LD context'],
    ['rich-schema', 'sch', 'write a rich schema'],
    ['rich-schema-encoding', 'enc', 'write a rich schema encoding'],
    ['rich-schema-mapping', 'map', 'write a rich schema mapping'],
    ['rich-schema-cred-def', 'cdf', 'write a rich schema credential definition'],
    ['rich-schema-pres-def', 'pdf', 'write a rich schema presentation definition'],
  ];
  for (const [name, kind, desc] of rich) {
    run(write(name, desc).requiredOption('--id <id>').requiredOption('--content <json>', 'the object (JSON or @file)').requiredOption('--name <rsName>').requiredOption('--version <rsVersion>').option('--ver <ver>', 'payload version'), (ctx, o) =>
      submitWith(ctx, (submitter) =>
        b.buildRichSchemaRequest({ submitter, kind, id: s(o.id)!, content: jsonObjectArg(s(o.content)!, '--content'), rsName: s(o.name)!, rsVersion: s(o.version)!, ...(o.ver !== undefined ? { ver: s(o.ver)! } : {}) }),
      ),
    );
  }
  run(
    write('node', 'add or update a node (NODE)')
      .requiredOption('--dest <verkey>', "the node's Ed25519 verkey")
      .requiredOption('--alias <alias>')
      .option('--client-ip <ip>')
      .option('--client-port <port>')
      .option('--node-ip <ip>')
      .option('--node-port <port>')
      .option('--services <list>', 'VALIDATOR, or "" to demote')
      .option('--blskey <b58>')
      .option('--blskey-pop <b58>'),
    (ctx, o) =>
      submitWith(ctx, (submitter) => {
        const data: b.NodeOptions['data'] = { alias: s(o.alias)! };
        if (o.clientIp !== undefined) data.client_ip = s(o.clientIp)!;
        if (o.clientPort !== undefined) data.client_port = intArg(s(o.clientPort), '--client-port')!;
        if (o.nodeIp !== undefined) data.node_ip = s(o.nodeIp)!;
        if (o.nodePort !== undefined) data.node_port = intArg(s(o.nodePort), '--node-port')!;
        if (o.services !== undefined) data.services = listArg(s(o.services))!;
        if (o.blskey !== undefined) data.blskey = s(o.blskey)!;
        if (o.blskeyPop !== undefined) data.blskey_pop = s(o.blskeyPop)!;
        return b.buildNodeRequest({ submitter, dest: s(o.dest)!, data });
      }),
  );
  run(
    write('pool-upgrade', 'schedule or cancel a pool upgrade')
      .requiredOption('--name <name>')
      .requiredOption('--version <version>')
      .requiredOption('--action <action>', 'start or cancel')
      .requiredOption('--sha256 <hex>')
      .option('--schedule <json>', 'node id -> ISO-8601 time (JSON or @file)')
      .option('--upgrade-timeout <minutes>')
      .option('--justification <text>')
      .option('--reinstall')
      .option('--force')
      .option('--package <name>'),
    (ctx, o) =>
      submitWith(ctx, (submitter) =>
        b.buildPoolUpgradeRequest({
          submitter,
          name: s(o.name)!,
          version: s(o.version)!,
          action: s(o.action) as 'start',
          sha256: s(o.sha256)!,
          ...(o.schedule !== undefined ? { schedule: jsonObjectArg(s(o.schedule)!, '--schedule') as Record<string, string> } : {}),
          ...(o.upgradeTimeout !== undefined ? { timeout: intArg(s(o.upgradeTimeout), '--upgrade-timeout')! } : {}),
          ...(o.justification !== undefined ? { justification: s(o.justification)! } : {}),
          reinstall: o.reinstall === true,
          force: o.force === true,
          ...(o.package !== undefined ? { package: s(o.package)! } : {}),
        }),
      ),
  );
  run(write('pool-config', 'make the pool writable or read-only').requiredOption('--writes <bool>', 'true or false').option('--force'), (ctx, o) => {
    if (o.writes !== 'true' && o.writes !== 'false') throw usage('--writes', 'true or false');
    return submitWith(ctx, (submitter) => b.buildPoolConfigRequest({ submitter, writes: o.writes === 'true', force: o.force === true }));
  });
  run(write('pool-restart', 'restart the pool nodes (an action: every node answers on its own)').requiredOption('--action <action>', 'start or cancel').option('--datetime <iso>', 'when; absent or "0" = now'), (ctx, o) =>
    submitWith(ctx, (submitter) => b.buildPoolRestartRequest({ submitter, action: s(o.action) as 'start', ...(o.datetime !== undefined ? { datetime: s(o.datetime)! } : {}) })),
  );
  run(write('validator-info', "ask every node for its own information (an action: one reply per node, nothing is written)"), (ctx) => submitWith(ctx, (submitter) => b.buildValidatorInfoRequest({ submitter })));
  run(
    write('auth-rule', 'change one authorization rule')
      .requiredOption('--txn-type <code>', 'auth_type: the type code, e.g. 1')
      .requiredOption('--action <action>', 'ADD or EDIT')
      .requiredOption('--field <field>')
      .option('--old-value <value>')
      .requiredOption('--new-value <value>')
      .requiredOption('--constraint <json>', 'the constraint (JSON or @file)'),
    (ctx, o) =>
      submitWith(ctx, (submitter) =>
        b.buildAuthRuleRequest({
          submitter,
          authType: s(o.txnType)!,
          authAction: s(o.action) as 'ADD',
          field: s(o.field)!,
          ...(o.oldValue !== undefined ? { oldValue: s(o.oldValue)! } : {}),
          newValue: s(o.newValue)!,
          constraint: jsonObjectArg(s(o.constraint)!, '--constraint'),
        }),
      ),
  );
  run(write('auth-rules', 'change several authorization rules in one txn').requiredOption('--rules <json>', 'list of {auth_type, auth_action, field, [old_value], new_value, constraint} (JSON or @file)'), (ctx, o) => {
    const rules = jsonArg(s(o.rules)!, '--rules');
    if (!Array.isArray(rules)) throw usage('--rules', 'a JSON list is required');
    return submitWith(ctx, (submitter) =>
      b.buildAuthRulesRequest({
        submitter,
        rules: rules.map((r) => {
          const x = r as Record<string, unknown>;
          return { authType: x.auth_type, authAction: x.auth_action, field: x.field, ...(x.old_value !== undefined ? { oldValue: x.old_value } : {}), newValue: x.new_value, constraint: x.constraint } as b.AuthRuleFields;
        }),
      }),
    );
  });
  run(write('taa', 'write a transaction author agreement (or retire one)').requiredOption('--version <version>').option('--text <text>').option('--text-file <file>').option('--ratification-ts <ts>').option('--retirement-ts <ts>'), (ctx, o) => {
    const text = o.textFile !== undefined ? readText(s(o.textFile)!, '--text-file') : s(o.text);
    return submitWith(ctx, (submitter) =>
      b.buildTxnAuthorAgreementRequest({
        submitter,
        version: s(o.version)!,
        ...(text !== undefined ? { text } : {}),
        ...(o.ratificationTs !== undefined ? { ratificationTs: intArg(s(o.ratificationTs), '--ratification-ts')! } : {}),
        ...(o.retirementTs !== undefined ? { retirementTs: intArg(s(o.retirementTs), '--retirement-ts')! } : {}),
      }),
    );
  });
  run(write('taa-aml', 'write the acceptance mechanisms list').requiredOption('--version <version>').requiredOption('--aml <json>', 'label -> description (JSON or @file)').option('--context <text>'), (ctx, o) =>
    submitWith(ctx, (submitter) =>
      b.buildTxnAuthorAgreementAmlRequest({ submitter, version: s(o.version)!, aml: jsonObjectArg(s(o.aml)!, '--aml') as Record<string, string>, ...(o.context !== undefined ? { amlContext: s(o.context)! } : {}) }),
    ),
  );
  // TXN_AUTHOR_AGREEMENT_DISABLE, LEDGERS_FREEZE, GET_FROZEN_LEDGERS (ledger-admin-commands.ts)
  addLedgerAdminCommands(program, run);
}
