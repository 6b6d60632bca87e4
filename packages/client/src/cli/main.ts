/** The `quire` command-line tool. */
import { Command, CommanderError } from 'commander';
import { Context, GENESIS_ENV, SEED_ENV, type GlobalOptions, type Output } from './context.js';
import { CliExit, cliVersion, errorLines, exitQuietlyOnClosedPipe, ExitCode } from './diagnostics.js';
import { addFollowCommand } from './follow-command.js';
import { addReadCommands } from './read-commands.js';
import { addWriteCommands } from './write-commands.js';
import { addWalletCommands } from './wallet-commands.js';

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
    .option('--taa-mechanism <label>', "writes: accept the ledger's transaction author agreement with this mechanism")
    .option('--dry-run', 'writes: print the signed request instead of submitting it')
    .option('--refresh', 'catch up the pool ledger before the command')
    .addHelpText('after', '\nquire -V, --version prints the version (as the only argument: several commands have a --version of their own).')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) });
  const run = (cmd: Command, fn: (ctx: Context, o: Record<string, string | boolean | undefined>) => Promise<void>): void => {
    cmd.exitOverride();
    cmd.action(async (...params: unknown[]) => {
      // commander passes the command's positional arguments first, then its options, then the command
      const c = params[params.length - 1] as Command;
      const all = c.optsWithGlobals<GlobalOptions & Record<string, string | boolean | undefined>>();
      const ctx = new Context(all, io, stop);
      ctx.args = c.processedArgs as unknown[];
      try {
        await fn(ctx, c.opts());
        onExit(0);
      } catch (e) {
        if (e instanceof CliExit) onExit(e.exitCode);
        else {
          for (const line of errorLines(e, { shape: ctx.shape(), requestType: ctx.requestType })) io.err(line);
          onExit(ExitCode.FAILED);
        }
      } finally {
        await ctx.close();
      }
    });
  };
  addWriteCommands(program, run);
  addReadCommands(program, run);
  addFollowCommand(program, run, stop);
  addWalletCommands(program, run);
  shortUsageErrors(program, io);
  return program;
}

/** commander's codes of a command line that does not parse (the user's mistake, not a failure of the command) */
const USAGE_ERRORS = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.excessArguments',
  'commander.invalidArgument',
  'commander.conflictingOption',
]);

/**
 * A command line that does not parse gets commander's one-line error, the command's usage line and where to read more,
 * instead of the whole help (which buries the error).
 */
function shortUsageErrors(program: Command, io: Output): void {
  const visit = (cmd: Command, path: string[]): void => {
    cmd.exitOverride((err) => {
      if (USAGE_ERRORS.has(err.code)) {
        io.err(`usage: ${[...path, cmd.usage()].join(' ')}`);
        io.err(`see '${[...path, '--help'].join(' ')}'`);
      }
      throw err;
    });
    for (const sub of cmd.commands) visit(sub, [...path, sub.name()]);
  };
  visit(program, [program.name()]);
}

/** One line saying what went wrong: the ledger's reason for a refused request, else the error code and its data. */
export function errorLine(e: unknown): string {
  return errorLines(e)[0];
}

/** Runs the tool with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], io: Output = consoleOutput, options: { stop?: AbortSignal } = {}): Promise<number> {
  if (io === consoleOutput) exitQuietlyOnClosedPipe();
  // not a commander option: `schema --version 1.0` and other commands have a --version of their own
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.out(`quire ${cliVersion()}`);
    return ExitCode.OK;
  }
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
    for (const line of errorLines(e)) io.err(line);
    return ExitCode.FAILED;
  }
  return code;
}
