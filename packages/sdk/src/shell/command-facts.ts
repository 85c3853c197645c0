/**
 * One simple command's facts as the unwrapper reached it (argv, assignments, redirections,
 * wrappers, where it sits), and what in it the analyser does not understand.
 *
 * Invariant: every assignment a builtin makes by name is listed (so an allow rule covers it
 * only if it names it), and an assignment to bash's command tables is unknown.
 */
import { assignedNames, builtinProblem } from "./builtins.js";
import type { ShellUnknown, SimpleCommandFacts } from "./facts.js";
import type { Scope, Unwrapping } from "./unwrap.js";
import type { WordValue } from "./words.js";
import { commandName, normaliseGit } from "./wrappers.js";

/** bash's hash table and alias table as variables: `BASH_CMDS[0]=/bin/rm; 0 -rf x` runs rm. */
const COMMAND_TABLES = /^(?:BASH_CMDS|BASH_ALIASES)(?:\[|\+?=)/;

export function commandFacts(
  words: readonly WordValue[],
  acc: Unwrapping,
  scope: Scope,
  original: string[],
  extra: Partial<SimpleCommandFacts>,
): { command: SimpleCommandFacts; unknown: ShellUnknown[] } {
  const unknown: ShellUnknown[] = [];
  const argv = words.map((w) => w.value);
  if (argv.length > 0) argv[0] = commandName(argv[0] as string);
  const expanded = words.flatMap((w, i) => (w.expanded ? [i] : []));
  const evaluated = builtinProblem(words);
  if (evaluated) unknown.push({ reason: evaluated, text: argv.join(" ") });
  const assignments = [...acc.assignments, ...assignedNames(words)];
  for (const assignment of assignments)
    if (COMMAND_TABLES.test(assignment))
      unknown.push({
        reason: "an assignment to BASH_CMDS or BASH_ALIASES changes which program a command name runs",
        text: assignment,
      });
  const command: SimpleCommandFacts = {
    argv,
    assignments,
    redirections: [...acc.redirections],
    wrappers: [...(scope.outer?.wrappers ?? []), ...acc.wrappers],
    original,
    direct: (scope.outer?.direct ?? true) && acc.direct,
    expanded,
    openArgs: false,
    normalized: normaliseGit(argv),
    context: scope.context,
    ...extra,
  };
  return { command, unknown };
}
