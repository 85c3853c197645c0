/**
 * From a simple command's words to the command it runs: wrappers unwrapped, `bash -c`,
 * `eval` and `trap` strings parsed again, `xargs` and `find -exec` commands reported
 * on their own.
 *
 * Invariant: every path through `unwrap` emits the command (so a deny rule can see
 * it) and records in `unknown` whatever it could not follow.
 */
import path from "node:path";
import { RESERVED_WORDS } from "./builtins.js";
import { commandFacts } from "./command-facts.js";
import type { ShellRedirection, ShellUnknown, SimpleCommandFacts } from "./facts.js";
import type { WordValue } from "./words.js";
import {
  commandName,
  ENV_OPTIONS,
  INTERPRETERS,
  literalWord,
  OPAQUE_RUNNERS,
  optionValue,
  PACKAGE_RUNNERS,
  PREFIX_WRAPPERS,
  readsProgramFromStdin,
  SHELLS,
  shellCommandString,
  skipOptions,
  XARGS_OPTIONS,
} from "./wrappers.js";

/** How deep `bash -c` / `eval` strings and backticks are parsed again before giving up. */
export const MAX_NESTING = 8;
const SYSTEM_BIN = new Set([
  "/bin",
  "/usr/bin",
  "/usr/local/bin",
  "/sbin",
  "/usr/sbin",
  "/usr/local/sbin",
  "/opt/homebrew/bin",
]);

/** Where a command sits and what feeds it. */
export interface Scope {
  context: string[];
  redirections: ShellRedirection[];
  /** Standard input comes from a pipe. */
  piped: boolean;
  /** For commands of a `bash -c` / `eval` string: the outer command's words and wrappers. */
  outer?: { original: string[]; wrappers: string[]; direct: boolean } | undefined;
  depth: number;
  /** Where the command starts: offsets in each enclosing source, outermost first (orders commands as written). */
  at: number[];
}

/** What the unwrapper reports into: the analysis of one command line. */
export interface AnalysisPort {
  readonly commands: SimpleCommandFacts[];
  readonly unknown: ShellUnknown[];
  /** Each command's position (`Scope.at`), to report commands in source order. */
  readonly positions: Map<SimpleCommandFacts, number[]>;
  parseAndWalk(source: string, scope: Scope): void;
}

export class Unwrapper {
  constructor(private readonly analysis: AnalysisPort) {}

  /** Emits the command `words[from..]` after unwrapping wrappers, recursively. */
  unwrap(words: readonly WordValue[], from: number, acc: Unwrapping, scope: Scope): void {
    const original = scope.outer?.original ?? words.map((w) => w.value);
    const emit = (start: number, extra: Partial<SimpleCommandFacts> = {}) =>
      this.emit(words.slice(start), acc, scope, original, extra);
    if (from >= words.length) {
      emit(words.length);
      return;
    }
    const head = words[from] as WordValue;
    if (head.expanded) {
      this.analysis.unknown.push({
        reason: `command name decided at run time (${head.kinds.join(", ")})`,
        text: head.value,
      });
      emit(from);
      return;
    }
    if (RESERVED_WORDS.has(head.value)) {
      this.analysis.unknown.push({
        reason: `a reserved word where a command name should be (${head.value}): the parser misread a compound command`,
        text: words
          .slice(from)
          .map((w) => w.value)
          .join(" "),
      });
      emit(from);
      return;
    }
    const name = commandName(head.value);
    if (name !== head.value && !SYSTEM_BIN.has(path.posix.dirname(path.posix.normalize(head.value))))
      acc.direct = false;
    const fail = (reason: string) => {
      this.analysis.unknown.push({
        reason,
        text: words
          .slice(from)
          .map((w) => w.value)
          .join(" "),
      });
      emit(from);
    };
    if (OPAQUE_RUNNERS.has(name)) {
      fail(`${name} runs its arguments as a command, which is not unwrapped`);
      return;
    }
    const runs = PACKAGE_RUNNERS[name];
    const sub = words[from + 1];
    if (runs && sub && !sub.expanded && runs.includes(sub.value)) {
      const next = words[from + 2]?.value === "--" ? from + 3 : from + 2;
      const first = words[next];
      if (!first || first.expanded || first.value.startsWith("-")) {
        fail(`${name} ${sub.value} with options or a command decided at run time`);
        return;
      }
      acc.wrappers.push(`${name} ${sub.value}`);
      acc.direct = false;
      this.unwrap(words, next, acc, scope);
      return;
    }
    const wrapper = PREFIX_WRAPPERS[name];
    if (wrapper && !(name === "command" && words.slice(from + 1).some((w) => /^-[pvV]*[vV]/.test(w.value)))) {
      const parsed = skipOptions(words, from + 1, wrapper);
      if ("unknown" in parsed) {
        fail(`${name}: ${parsed.unknown}`);
        return;
      }
      let next = parsed.next;
      if (name === "timeout") next++; // the duration
      // `time` is a keyword before a whole simple command: `time A=1 cmd` assigns A.
      if (name === "time")
        while (next < words.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test((words[next] as WordValue).value)) {
          acc.assignments.push((words[next] as WordValue).value);
          next++;
        }
      if (next >= words.length) {
        emit(from);
        return;
      }
      acc.wrappers.push(name);
      if (!wrapper.direct) acc.direct = false;
      this.unwrap(words, next, acc, scope);
      return;
    }
    switch (name) {
      case "env": {
        const parsed = skipOptions(words, from + 1, ENV_OPTIONS);
        if ("unknown" in parsed) {
          fail(`env: ${parsed.unknown}`);
          return;
        }
        let next = parsed.next;
        // `env -C dir git status` is `git -C dir status`: only the words as written describe it.
        if (words.slice(from + 1, next).some((w) => /^(?:-[^-]*C|--chdir)/.test(w.value))) acc.direct = false;
        // env takes every word with a `=` as an assignment, names bash could not assign too.
        while (next < words.length && (words[next] as WordValue).value.includes("=")) {
          const assignment = (words[next] as WordValue).value;
          if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(assignment)) {
            fail(
              "env: a variable name bash does not assign (BASH_FUNC_name%%= defines a function in a child bash)",
            );
            return;
          }
          acc.assignments.push(assignment);
          next++;
        }
        if (next >= words.length) {
          emit(from);
          return;
        }
        acc.wrappers.push("env");
        this.unwrap(words, next, acc, scope);
        return;
      }
      case "eval": {
        const rest = words.slice(from + 1);
        if (rest.some((w) => w.expanded)) {
          fail("eval of a string decided at run time");
          return;
        }
        this.reparse(rest.map((w) => w.value).join(" "), "eval", words, acc, scope, true, from);
        return;
      }
      case "source":
      case ".": {
        fail(`${name} runs the commands of a file`);
        return;
      }
      case "trap": {
        const rest = words.slice(from + 1).filter((w) => !/^-[lp]+$/.test(w.value) && w.value !== "--");
        if (rest.length < 2) {
          emit(from);
          return;
        }
        const action = rest[0] as WordValue;
        emit(from);
        if (action.expanded) {
          fail("trap action decided at run time");
          return;
        }
        this.reparse(
          action.value,
          "trap",
          words,
          { ...acc, wrappers: [...acc.wrappers] },
          scope,
          false,
          from,
        );
        return;
      }
      case "alias":
        if (words.slice(from + 1).some((w) => w.value.includes("="))) {
          fail("alias changes what later commands run");
          return;
        }
        {
          emit(from);
          return;
        }
      case "enable":
        // `enable NAME` loads ./NAME as a shared object when NAME is not a builtin (bash 5.2): only listing is understood.
        if (words.slice(from + 1).some((w) => w.expanded || !/^-[aps]+$/.test(w.value))) {
          fail("enable loads shared objects or changes which builtins run");
          return;
        }
        emit(from);
        return;
      case "hash":
        if (words.slice(from + 1).some((w) => /^-[a-z]*[pf]/.test(w.value))) {
          fail(`${name} changes what later commands run`);
          return;
        }
        {
          emit(from);
          return;
        }
      case "xargs": {
        this.xargs(words, from, acc, scope);
        return;
      }
      case "find": {
        this.find(words, from, acc, scope);
        return;
      }
    }
    if (SHELLS.has(name)) {
      const input = shellCommandString(words, from + 1);
      if ("unknown" in input) {
        fail(`${name}: ${input.unknown}`);
        return;
      }
      if ("stdin" in input) {
        fail(`${name} reads commands from standard input`);
        return;
      }
      if ("script" in input) {
        if (input.startup)
          this.analysis.unknown.push({
            reason: `${name}: ${input.startup}`,
            text: words.map((w) => w.value).join(" "),
          });
        const script = words[input.script] as WordValue;
        if (script.expanded) {
          fail(`${name} -c with a command string decided at run time`);
          return;
        }
        this.reparse(script.value, name, words, acc, scope, true, from);
        return;
      }
      emit(from);
      return;
    }
    if (
      INTERPRETERS.has(name) &&
      readsProgramFromStdin(words.slice(from + 1), acc.redirections, scope.piped)
    ) {
      fail(`${name} reads its program from standard input`);
      return;
    }
    emit(from);
  }

  private reparse(
    source: string,
    wrapper: string,
    words: readonly WordValue[],
    acc: Unwrapping,
    scope: Scope,
    transparent: boolean,
    from: number,
  ): void {
    if (scope.depth >= MAX_NESTING) {
      this.analysis.unknown.push({ reason: "command strings nested too deeply", text: source });
      return;
    }
    const before = this.analysis.commands.length;
    this.analysis.parseAndWalk(source, {
      context: [...scope.context, "shell-string"],
      redirections: [],
      piped: false,
      depth: scope.depth + 1,
      at: scope.at,
      outer: {
        original: scope.outer?.original ?? words.map((w) => w.value),
        wrappers: [...(scope.outer?.wrappers ?? []), ...acc.wrappers, wrapper],
        direct: (scope.outer?.direct ?? true) && acc.direct && transparent,
      },
    });
    // Assignments and redirections of the outer command apply to everything the string runs.
    for (const command of this.analysis.commands.slice(before)) {
      command.assignments.unshift(...acc.assignments);
      command.redirections.push(...acc.redirections);
    }
    // A string that runs no command (`bash -c '(( 1 ))'`): the program that reads it still runs.
    if (this.analysis.commands.length === before)
      this.emit(
        words.slice(from),
        acc,
        scope,
        words.map((w) => w.value),
        {},
      );
  }

  private xargs(words: readonly WordValue[], from: number, acc: Unwrapping, scope: Scope): void {
    const parsed = skipOptions(words, from + 1, XARGS_OPTIONS);
    this.emit(
      words.slice(from),
      { ...acc, wrappers: [...acc.wrappers] },
      scope,
      words.map((w) => w.value),
      {},
    );
    if ("unknown" in parsed) {
      this.analysis.unknown.push({
        reason: `xargs: ${parsed.unknown}`,
        text: words.map((w) => w.value).join(" "),
      });
      return;
    }
    const replace = optionValue(words, from + 1, parsed.next, ["-I", "--replace"]);
    const inner = words
      .slice(parsed.next)
      .map((w) =>
        replace !== undefined && w.value.includes(replace)
          ? { ...w, expanded: true, kinds: [...w.kinds, "xargs"] }
          : w,
      );
    const command = inner.length > 0 ? inner : [literalWord("echo")];
    this.spawned(command, "xargs", acc, scope, replace === undefined);
  }

  private find(words: readonly WordValue[], from: number, acc: Unwrapping, scope: Scope): void {
    this.emit(
      words.slice(from),
      { ...acc, wrappers: [...acc.wrappers] },
      scope,
      words.map((w) => w.value),
      {},
    );
    for (let i = from + 1; i < words.length; i++) {
      const action = (words[i] as WordValue).value;
      if (!["-exec", "-execdir", "-ok", "-okdir"].includes(action) || (words[i] as WordValue).expanded)
        continue;
      const end = words.findIndex((w, j) => j > i && !w.expanded && (w.value === ";" || w.value === "+"));
      if (end < 0) {
        this.analysis.unknown.push({
          reason: `find ${action} without a closing ; or +`,
          text: words.map((w) => w.value).join(" "),
        });
        return;
      }
      const inner = words
        .slice(i + 1, end)
        .map((w) => (w.value.includes("{}") ? { ...w, expanded: true, kinds: [...w.kinds, "find"] } : w));
      if (inner.length > 0) this.spawned(inner, "find", acc, scope, false);
      i = end;
    }
  }

  /** A command that a wrapper spawns on its own (`xargs`, `find -exec`): it must be allowed on its own. */
  private spawned(
    inner: WordValue[],
    wrapper: string,
    acc: Unwrapping,
    scope: Scope,
    openArgs: boolean,
  ): void {
    const context = wrapper === "find" ? "find-exec" : "xargs";
    const innerScope: Scope = {
      ...scope,
      context: [...scope.context, context],
      outer: undefined,
      piped: false,
    };
    const before = this.analysis.commands.length;
    this.unwrap(
      inner,
      0,
      { assignments: [], redirections: [], wrappers: [...acc.wrappers, wrapper], direct: true, context: [] },
      innerScope,
    );
    if (openArgs) for (const command of this.analysis.commands.slice(before)) command.openArgs = true;
  }

  emit(
    words: readonly WordValue[],
    acc: Unwrapping,
    scope: Scope,
    original: string[],
    extra: Partial<SimpleCommandFacts>,
  ): void {
    const { command, unknown } = commandFacts(words, acc, scope, original, extra);
    this.analysis.unknown.push(...unknown);
    this.analysis.commands.push(command);
    this.analysis.positions.set(command, scope.at);
  }

  emitPlain(words: readonly WordValue[], assignments: string[], scope: Scope, wrappers: string[]): void {
    this.emit(
      words,
      { assignments, redirections: [...scope.redirections], wrappers, direct: true, context: [] },
      scope,
      scope.outer?.original ?? words.map((w) => w.value),
      {},
    );
  }
}

export interface Unwrapping {
  assignments: string[];
  redirections: ShellRedirection[];
  wrappers: string[];
  direct: boolean;
  context: string[];
}
