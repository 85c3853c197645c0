/**
 * Builtins that read their arguments as arithmetic, as variable names or as code,
 * and the forms of them the analysis understands.
 *
 * Invariant: a builtin in the table below is understood only in the forms listed;
 * every operand bash evaluates (a variable name, an arithmetic expression, an option
 * that turns evaluation on) must be a literal, or the command gets a problem
 * (`unknown`). Builtins that run strings bash builds itself (completion, history,
 * key bindings) are never understood.
 */
import { literalArithmetic, plainDeclaration, plainName } from "./arithmetic.js";
import type { WordValue } from "./words.js";

type Check = (args: readonly WordValue[]) => string | undefined;

const NAME_PROBLEM = (builtin: string) =>
  `${builtin}: a variable name that is not a plain literal (a subscript in it is evaluated and can run commands)`;

/** Options of the declaring builtins that make bash evaluate later values: `-i` (arithmetic), `-n` (name reference). */
function declaring(builtin: string): Check {
  return (args) => {
    for (const word of args) {
      if (word.expanded && !/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word.value))
        return `${builtin} of a name or option decided at run time`;
      const text = word.value;
      if (/^[-+]/.test(text)) {
        if (/[in]/.test(text.slice(1)))
          return `${builtin} ${text}: later values are evaluated as arithmetic or as variable names`;
        continue;
      }
      if (!plainDeclaration(text)) return NAME_PROBLEM(builtin);
    }
    return undefined;
  };
}

/** Options taking an argument per builtin, and which of them name a variable. */
function namingTargets(
  builtin: string,
  withArg: string,
  nameOptions: string,
  operandsAreNames: boolean,
): Check {
  return (args) => {
    let i = 0;
    for (; i < args.length; i++) {
      const word = args[i] as WordValue;
      if (word.expanded) return `${builtin}: an option or name decided at run time`;
      const text = word.value;
      if (text === "--") {
        i++;
        break;
      }
      if (!text.startsWith("-") || text === "-") break;
      for (let k = 1; k < text.length; k++) {
        const letter = text[k] as string;
        if (!withArg.includes(letter)) continue;
        const attached = text.slice(k + 1);
        const value = attached !== "" ? attached : args[++i]?.value;
        if (nameOptions.includes(letter) && (value === undefined || !plainName(value) || args[i]?.expanded))
          return NAME_PROBLEM(builtin);
        break;
      }
    }
    if (!operandsAreNames) return undefined;
    for (const word of args.slice(i))
      if (word.expanded || !plainName(word.value)) return NAME_PROBLEM(builtin);
    return undefined;
  };
}

const ALWAYS =
  (reason: string): Check =>
  () =>
    reason;

const SET_LETTERS = "eufCvnabhB";
const SET_OPTIONS = new Set([
  "errexit",
  "nounset",
  "pipefail",
  "noglob",
  "noclobber",
  "verbose",
  "noexec",
  "allexport",
  "notify",
  "hashall",
  "braceexpand",
]);
const SHOPT_OPTIONS = new Set([
  "nullglob",
  "failglob",
  "dotglob",
  "globstar",
  "nocaseglob",
  "nocasematch",
  "extglob",
  "lastpipe",
  "inherit_errexit",
]);

/** `set`: only options that change nothing about what runs; `-x` expands PS4 (prompt expansion runs code), `-k` turns words into assignments. */
const setOptions: Check = (args) => {
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as WordValue;
    if (word.expanded) return "set: an option decided at run time";
    const text = word.value;
    if (text === "--" || text === "-" || !/^[-+]/.test(text)) return undefined;
    if (text === "-o" || text === "+o") {
      const name = args[++i];
      if (name === undefined) return undefined;
      if (name.expanded || !SET_OPTIONS.has(name.value))
        return `set -o ${name.value}: not an option the analysis understands`;
      continue;
    }
    for (const letter of text.slice(1)) {
      if (letter === "o") {
        // `set -euo pipefail`: the option name is the next word.
        const name = args[++i];
        if (name && (name.expanded || !SET_OPTIONS.has(name.value)))
          return `set -o ${name.value}: not an option the analysis understands`;
      } else if (!SET_LETTERS.includes(letter)) return `set ${text}: not an option the analysis understands`;
    }
  }
  return undefined;
};

const shoptOptions: Check = (args) => {
  for (const word of args) {
    if (word.expanded) return "shopt: an option decided at run time";
    if (/^-[supqo]+$/.test(word.value)) continue;
    if (!SHOPT_OPTIONS.has(word.value)) return `shopt ${word.value}: not an option the analysis understands`;
  }
  return undefined;
};

/** `test -v NAME` / `[ -v NAME ]`: the name's subscript is evaluated. */
const testNames =
  (builtin: string): Check =>
  (args) => {
    for (let i = 0; i < args.length; i++) {
      if ((args[i] as WordValue).value !== "-v" || (args[i] as WordValue).expanded) continue;
      const name = args[i + 1];
      if (name && (name.expanded || !plainName(name.value))) return NAME_PROBLEM(builtin);
    }
    return undefined;
  };

const letArithmetic: Check = (args) =>
  args.every((w) => !w.expanded && literalArithmetic(w.value))
    ? undefined
    : "let: arithmetic on something other than literals (a variable's value can run commands)";

const getoptsName: Check = (args) => {
  const name = args[1];
  return name && (name.expanded || !plainName(name.value)) ? NAME_PROBLEM("getopts") : undefined;
};

/** The builtins whose arguments bash evaluates, and how each is checked. */
export const EVALUATING_BUILTINS: Readonly<Record<string, Check>> = {
  let: letArithmetic,
  declare: declaring("declare"),
  typeset: declaring("typeset"),
  local: declaring("local"),
  export: declaring("export"),
  readonly: declaring("readonly"),
  unset: namingTargets("unset", "", "", true),
  printf: namingTargets("printf", "v", "v", false),
  read: namingTargets("read", "adinNptu", "a", true),
  mapfile: namingTargets("mapfile", "dnOsuCc", "", true),
  readarray: namingTargets("readarray", "dnOsuCc", "", true),
  wait: namingTargets("wait", "p", "p", false),
  getopts: getoptsName,
  test: testNames("test"),
  "[": testNames("["),
  "[[": testNames("[["),
  set: setOptions,
  shopt: shoptOptions,
  compgen: ALWAYS("compgen evaluates word lists and runs completion commands"),
  complete: ALWAYS("complete registers completion commands"),
  compopt: ALWAYS("compopt changes completion"),
  fc: ALWAYS("fc runs commands from the history"),
  history: ALWAYS("history edits what fc and ! run"),
  bind: ALWAYS("bind registers commands for key bindings"),
  coproc: ALWAYS("coproc: tree-sitter-bash does not parse it (a named coproc reads as another command)"),
};

/** Why a builtin's arguments can run code bash evaluates, or undefined. */
export function builtinProblem(words: readonly WordValue[]): string | undefined {
  const head = words[0];
  if (!head || head.expanded) return undefined;
  const name = head.value;
  if ((name === "mapfile" || name === "readarray") && words.some((w) => /^-[a-zA-Z]*C/.test(w.value)))
    return `${name} -C runs a callback string`;
  return EVALUATING_BUILTINS[name]?.(words.slice(1));
}

/** Where a builtin puts the variables it sets: options naming one, and whether the operands are names. */
interface Setting {
  withArg: string;
  nameOptions: string;
  operands: boolean;
  /** Options after which the operands are not variables (`unset -f` names functions, `declare -p` prints). */
  notVariables?: string;
}

const SETTING: Readonly<Record<string, Setting>> = {
  printf: { withArg: "v", nameOptions: "v", operands: false },
  read: { withArg: "adinNptu", nameOptions: "a", operands: true },
  mapfile: { withArg: "dnOsuCc", nameOptions: "", operands: true },
  readarray: { withArg: "dnOsuCc", nameOptions: "", operands: true },
  wait: { withArg: "p", nameOptions: "p", operands: false },
  unset: { withArg: "", nameOptions: "", operands: true, notVariables: "f" },
  // A bare name makes the variable local and unset in a function: `f() { local PATH; git; }` runs ./git.
  local: { withArg: "", nameOptions: "", operands: true, notVariables: "pfF" },
  declare: { withArg: "", nameOptions: "", operands: true, notVariables: "pfF" },
  typeset: { withArg: "", nameOptions: "", operands: true, notVariables: "pfF" },
};

/**
 * The variables a builtin sets by a name it is given (`printf -v PATH`, `read PATH`,
 * `mapfile PATH`, `getopts a PATH`, `wait -p PATH`, `unset PATH`, `local PATH`), as
 * `NAME=<builtin>`: like a `NAME=value` prefix they change what later commands run, so
 * an allow rule covers them only when it names them. Names decided at run time are
 * `unknown` already (`builtinProblem`); the fixed defaults (`REPLY`, `MAPFILE`,
 * `OPTARG`) are not listed.
 */
export function assignedNames(words: readonly WordValue[]): string[] {
  const head = words[0];
  if (!head || head.expanded) return [];
  const builtin = head.value;
  const args = words.slice(1).map((w) => w.value);
  if (builtin === "getopts")
    return args[1] !== undefined && plainName(args[1]) ? [`${args[1]}=<getopts>`] : [];
  const setting = SETTING[builtin];
  if (!setting) return [];
  const names: string[] = [];
  let i = 0;
  let variables = true;
  for (; i < args.length; i++) {
    const text = args[i] as string;
    if (text === "--") {
      i++;
      break;
    }
    if (!/^[-+]./.test(text)) break;
    for (let k = 1; k < text.length; k++) {
      const letter = text[k] as string;
      if (setting.notVariables?.includes(letter)) variables = false;
      if (!setting.withArg.includes(letter)) continue;
      const attached = text.slice(k + 1);
      const value = attached !== "" ? attached : args[++i];
      if (setting.nameOptions.includes(letter) && value !== undefined) names.push(value);
      break;
    }
  }
  if (setting.operands && variables) for (const text of args.slice(i)) if (plainName(text)) names.push(text);
  return names.map((name) => `${name}=<${builtin}>`);
}

/** bash's reserved words: as a command name they mean the grammar misread a compound command. */
export const RESERVED_WORDS = new Set([
  "!",
  "[[",
  "]]",
  "{",
  "}",
  "case",
  "coproc",
  "do",
  "done",
  "elif",
  "else",
  "esac",
  "fi",
  "for",
  "function",
  "if",
  "in",
  "select",
  "then",
  "until",
  "while",
]);
