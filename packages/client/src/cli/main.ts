/** The `quire` command-line tool. */
import { Command, CommanderError } from 'commander';
import { QuireError } from '@quire/common';
import { Context, GENESIS_ENV, SEED_ENV, type GlobalOptions, type Output } from './context.js';
import { addFollowCommand } from './follow-command.js';
import { addReadCommands } from './read-commands.js';
import { addWriteCommands } from './write-commands.js';

const consoleOutput: Output = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

/** Builds the program; `io` receives all output; `stop` ends a long-running command (follow) as SIGINT does. */
export function buildProgram(io: Output = consoleOutput, onExit: (code: number) => void = () => undefined, stop?: AbortSignal): Command {
  const program = new Command('quire')
    .description('Quire ledger client: keys, requests for every type, submission with reply agreement, reads verified by state proof')
    .option('--genesis <file>', `pool genesis file (default $${GENESIS_ENV})`)
    .option('--json', "print the reply's result as JSON (big integers exact)")
    .option('--seed <seed>', `signing key seed: 32 characters or 64 hex digits (default $${SEED_ENV})`)
    .option('--key-file <file>', 'file holding the seed (text, or JSON {"seed": ...})')
    .option('--timeout <ms>', 'deadline of a request')
    .option('--freshness <seconds>', 'largest accepted age of a read proof (default 300)')
    .option('--endorser <did>', 'writes: name this endorser, sign as author and print the request for the endorser')
    .option('--taa-mechanism <label>', 'writes: accept the ledger\'s transaction author agreement with this mechanism')
    .option('--dry-run', 'writes: print the signed request instead of submitting it')
    .option('--refresh', 'catch up the pool ledger before the command')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) });
  const run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>): void => {
    cmd.exitOverride();
    cmd.action(async (_opts: unknown, c: Command) => {
      const all = c.optsWithGlobals<GlobalOptions & Record<string, string | boolean | undefined>>();
      const ctx = new Context(all, io);
      try {
        await fn(ctx, c.opts());
        onExit(0);
      } catch (e) {
        io.err(errorLine(e));
        onExit(1);
      } finally {
        await ctx.close();
      }
    });
  };
  addWriteCommands(program, run);
  addReadCommands(program, run);
  addFollowCommand(program, run, stop);
  return program;
}

/** One line saying what went wrong: the ledger's reason for a refused request, else the error code and its data. */
export function errorLine(e: unknown): string {
  if (e instanceof QuireError) {
    const reason = typeof e.data.reason === 'string' ? e.data.reason : undefined;
    if (e.code === 'REQUEST_NACKED' || e.code === 'REQUEST_REJECTED') return `error: request refused by the pool: ${reason ?? e.message}`;
    if (e.code === 'INVALID_ARGUMENT' && typeof e.data.field === 'string' && reason !== undefined) return `error: ${e.data.field}: ${reason}`;
    return `error: ${e.message}`;
  }
  return `error: ${e instanceof Error ? e.message : String(e)}`;
}

/** Runs the tool with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], io: Output = consoleOutput, options: { stop?: AbortSignal } = {}): Promise<number> {
  let code = 0;
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    options.stop,
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.help' ? 0 : 1;
    io.err(errorLine(e));
    return 1;
  }
  return code;
}
