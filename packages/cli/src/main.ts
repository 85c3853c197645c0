/**
 * The `rein` command line, after the fast paths of bin.ts. Exit codes: 0 success,
 * 1 a run failed, 2 usage or config errors. User errors print one clear message (and a hint), never a stack
 * trace unless --debug.
 */
import { maskConnectionStrings } from "@rein/harness";
import { CommanderError } from "commander";
import { CliError, ExitCode } from "./errors.js";
import { buildProgram, type GlobalOptions, globalsFrom } from "./program.js";
import { finish } from "./prompt-exit.js";
import { watchClosedPipes } from "./ui/closed-pipe.js";
import { colorsFor } from "./ui/terminal.js";

watchClosedPipes();

const debug = process.argv.includes("--debug");
let exitCode: number = ExitCode.ok;

function report(error: unknown): number {
  const c = colorsFor(process.stderr);
  // Whatever an error quotes (a database URL in a driver message), its secrets stay out.
  const stderr = { write: (text: string) => process.stderr.write(maskConnectionStrings(text)) };
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === "commander.helpDisplayed") return ExitCode.ok;
    if (error.code === "commander.help") return ExitCode.usage; // a command group without its subcommand: help was shown
    const [message, ...more] = error.message.replace(/^error:\s*/, "").split("\n");
    // Commander's own "(Did you mean run?)" for a misspelt command or option is the most useful line.
    const suggestion = more.find((line) => /^\(Did you mean /.test(line.trim()));
    const said = suggestion ? `${message} ${suggestion.trim()}` : message;
    stderr.write(`${c.red("rein:")} ${said}\n${c.dim(`  see ${helpCommand()}`)}\n`);
    return ExitCode.usage;
  }
  if (error instanceof CliError) {
    stderr.write(`${c.red("rein:")} ${error.message}\n`);
    if (error.hint) stderr.write(`${c.dim(`  ${error.hint}`)}\n`);
    if (debug)
      stderr.write(
        `${error.stack ?? ""}\n${error.cause ? String((error.cause as Error).stack ?? error.cause) : ""}\n`,
      );
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  stderr.write(`${c.red("rein:")} ${message}\n`);
  if (debug && error instanceof Error) stderr.write(`${error.stack ?? ""}\n`);
  else stderr.write(`${c.dim("  (run with --debug for the stack trace)")}\n`);
  return ExitCode.failed;
}

/** `rein --help`, or `rein <command> --help` when a known command was given. */
function helpCommand(): string {
  const known = program.commands.map((command) => command.name());
  const words = process.argv.slice(2).filter((word) => !word.startsWith("-"));
  const command = words[0] !== undefined && known.includes(words[0]) ? `${words[0]} ` : "";
  return `rein ${command}--help`;
}

const program = buildProgram(async (task: (globals: GlobalOptions) => Promise<number>) => {
  exitCode = await task(globalsFrom(program));
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  exitCode = report(error);
}
await finish(exitCode);
