/**
 * Wrappers: commands that run their arguments as a command (`sudo`, `env`, `nice`,
 * `timeout`, `xargs`, `find -exec`, `bash -c`, `eval`, ...), and how to reach the
 * command they run.
 *
 * Invariant: an option this module does not know, or a word decided at run time
 * where an option or the command name could be, makes the command unknown; it is
 * never guessed past.
 */
import path from "node:path";
import type { ShellRedirection } from "./facts.js";
import type { WordValue } from "./words.js";

export type OptionParse = { next: number } | { unknown: string };

interface OptionSpec {
  /** Single-letter options without an argument. */
  flags: string;
  /** Single-letter options taking an argument (attached or the next word). */
  withArg: string;
  /** Long options without an argument. */
  long?: readonly string[];
  /** Long options taking an argument (`--x=v` or `--x v`). */
  longWithArg?: readonly string[];
  /** Options that make the wrapper do something else than run the rest: unknown. */
  refuse?: Readonly<Record<string, string>>;
  /** `-<digits>` is an option (`nice -10`). */
  numeric?: boolean;
}

/** Skips the wrapper's options starting at `from`; returns the index of the first operand. */
export function skipOptions(words: readonly WordValue[], from: number, spec: OptionSpec): OptionParse {
  let i = from;
  while (i < words.length) {
    const word = words[i] as WordValue;
    const text = word.value;
    if (word.expanded) return { unknown: `option or command decided at run time: ${text}` };
    if (text === "--") return { next: i + 1 };
    if (!text.startsWith("-") || text === "-") return { next: i };
    const refused = spec.refuse?.[text] ?? spec.refuse?.[text.split("=")[0] as string];
    if (refused) return { unknown: refused };
    if (spec.numeric && /^-\d+$/.test(text)) {
      i++;
      continue;
    }
    if (text.startsWith("--")) {
      const [name, attached] = text.split(/=(.*)/s) as [string, string | undefined];
      if (spec.long?.includes(name) && attached === undefined) i++;
      else if (spec.longWithArg?.includes(name)) i += attached === undefined ? 2 : 1;
      else return { unknown: `unknown option ${name}` };
      continue;
    }
    let consumedNext = false;
    for (let k = 1; k < text.length; k++) {
      const letter = text[k] as string;
      const refusedLetter = spec.refuse?.[`-${letter}`];
      if (refusedLetter) return { unknown: refusedLetter };
      if (spec.flags.includes(letter)) continue;
      if (spec.withArg.includes(letter)) {
        if (k === text.length - 1) consumedNext = true;
        break;
      }
      return { unknown: `unknown option -${letter}` };
    }
    i += consumedNext ? 2 : 1;
  }
  return { next: i };
}

/** Wrappers whose inner command runs as written: argv alone describes what runs. */
export const PREFIX_WRAPPERS: Readonly<Record<string, OptionSpec & { direct: boolean }>> = {
  command: { flags: "p", withArg: "", direct: true },
  builtin: { flags: "", withArg: "", direct: true },
  // `exec -l` and `exec -a NAME` change argv[0]: a shell named `-bash` is a login shell
  // (it runs the profile files), a multi-call program picks what it does by that name.
  exec: {
    flags: "c",
    withArg: "",
    refuse: {
      "-l": "exec -l starts the program as a login shell (a shell then runs its profile files)",
      "-a": "exec -a gives the program another argv[0], which shells and multi-call programs act on",
    },
    direct: true,
  },
  nohup: { flags: "", withArg: "", direct: true },
  time: { flags: "p", withArg: "", direct: true },
  nice: { flags: "", withArg: "n", longWithArg: ["--adjustment"], numeric: true, direct: true },
  stdbuf: { flags: "", withArg: "ioe", longWithArg: ["--input", "--output", "--error"], direct: true },
  timeout: {
    flags: "v",
    withArg: "sk",
    long: ["--preserve-status", "--foreground", "--verbose"],
    longWithArg: ["--signal", "--kill-after"],
    direct: true,
  },
  sudo: {
    flags: "AbEHkKnPSBN",
    withArg: "ugpCDhrtTUR",
    long: ["--preserve-env", "--non-interactive", "--background", "--stdin", "--set-home", "--askpass"],
    longWithArg: ["--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type"],
    refuse: {
      "-i": "sudo -i runs a login shell",
      "-s": "sudo -s runs a shell",
      "-e": "sudo -e edits files",
      "-l": "sudo -l lists privileges",
      "-v": "sudo -v only validates",
      "--login": "sudo --login runs a login shell",
      "--shell": "sudo --shell runs a shell",
      "--edit": "sudo --edit edits files",
    },
    direct: false,
  },
  doas: { flags: "n", withArg: "uC", refuse: { "-s": "doas -s runs a shell" }, direct: false },
  setsid: { flags: "cfw", withArg: "", direct: true },
  ionice: { flags: "t", withArg: "cnpP", direct: true },
  unbuffer: { flags: "p", withArg: "", direct: true },
  // busybox runs its applet of that name: `busybox rm x` is rm.
  busybox: { flags: "", withArg: "", direct: false },
  // Package runners: the command runs with the package's bin folders first on PATH.
  npx: {
    flags: "y",
    withArg: "",
    long: ["--yes", "--no"],
    refuse: { "-c": "npx -c runs a shell string" },
    direct: false,
  },
  bunx: { flags: "", withArg: "", direct: false },
  uvx: { flags: "", withArg: "", direct: false },
};

/** Package managers whose `exec` / `run` / `dlx` subcommand runs the rest as a command (PATH changed). */
export const PACKAGE_RUNNERS: Readonly<Record<string, readonly string[]>> = {
  npm: ["exec", "x"],
  pnpm: ["exec", "dlx"],
  yarn: ["exec", "dlx"],
  bun: ["x"],
  uv: ["run"],
  poetry: ["run"],
  pipx: ["run"],
  pdm: ["run"],
  hatch: ["run"],
  rye: ["run"],
  bundle: ["exec"],
  direnv: ["exec"],
};

/** Commands that run their arguments as a command (or a shell string) and are not unwrapped here: unknown. */
export const OPAQUE_RUNNERS = new Set([
  "taskset",
  "chrt",
  "strace",
  "ltrace",
  "gdb",
  "valgrind",
  "perf",
  "watch",
  "script",
  "su",
  "runuser",
  "pkexec",
  "sg",
  "flock",
  "chroot",
  "unshare",
  "nsenter",
  "firejail",
  "bwrap",
  "systemd-run",
  "ssh",
  "parallel",
  "tmux",
  "screen",
  "at",
  "batch",
  "xterm",
  "expect",
  "proxychains",
  "proxychains4",
  "torsocks",
  "cross-env",
  "env-cmd",
  "dotenv",
  "concurrently",
  "npm-run-all",
  "nodemon",
  "entr",
]);

export const ENV_OPTIONS: OptionSpec = {
  flags: "i0v",
  withArg: "uC",
  long: ["--ignore-environment", "--null", "--debug"],
  longWithArg: ["--unset", "--chdir"],
  refuse: {
    "-S": "env -S splits a string into a command",
    "--split-string": "env --split-string splits a string into a command",
  },
};

export const XARGS_OPTIONS: OptionSpec = {
  flags: "0prtxo",
  withArg: "dEILnPsa",
  long: ["--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"],
  longWithArg: [
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-lines",
    "--max-procs",
    "--max-chars",
    "--replace",
    "--eof",
  ],
  refuse: {
    "-i": "xargs -i: give the replacement as -I",
    "-l": "xargs -l: give the count as -L",
    // The slot number lands in the command's environment: `--process-slot-var=PATH git` runs ./0/git.
    "--process-slot-var":
      "xargs --process-slot-var sets a variable in the environment of the command it runs",
  },
};

export const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish"]);
export const INTERPRETERS = new Set([
  "python",
  "python2",
  "python3",
  "node",
  "nodejs",
  "deno",
  "bun",
  "perl",
  "ruby",
  "php",
  "lua",
  "tclsh",
  "osascript",
  "pwsh",
]);

/**
 * bash's long options that run nothing of their own. `--rcfile`/`--init-file` name a file
 * an interactive shell runs, `--debugger` runs the debugger's start file: unknown, as is
 * any option not listed. `--login` is listed but runs the profile files (see below).
 */
const SHELL_LONG_OPTIONS = new Set([
  "--norc",
  "--noprofile",
  "--noediting",
  "--posix",
  "--login",
  "--restricted",
  "--verbose",
  "--help",
  "--version",
]);

/**
 * A login shell runs /etc/profile and ~/.bash_profile (or ~/.profile) before the command,
 * and ~/.bash_logout at `exit`, even with `--noprofile`: unknown in every form.
 */
const LOGIN_STARTUP = "a login shell (-l, --login) runs its profile files before the command";

/** Where a `bash -c` string is, or why the shell's input cannot be known. */
export function shellCommandString(
  words: readonly WordValue[],
  from: number,
): { script: number; startup?: string } | { file: number } | { stdin: true } | { unknown: string } {
  let i = from;
  let commandMode = false;
  /** Why a startup file runs before the command string (it is then still read, for deny rules). */
  let startup: string | undefined;
  while (i < words.length) {
    const word = words[i] as WordValue;
    if (word.expanded) return { unknown: `shell option decided at run time: ${word.value}` };
    const text = word.value;
    if (text === "--" || text === "-") {
      i++;
      break;
    }
    if (text === "--rcfile" || text === "--init-file") {
      startup ??= `${text} names a startup file an interactive shell runs`;
      i += 2;
      continue;
    }
    if (text.startsWith("--")) {
      if (!SHELL_LONG_OPTIONS.has(text))
        return { unknown: `shell option ${text} (it may run a startup file)` };
      if (text === "--login") startup ??= LOGIN_STARTUP;
      i++;
      continue;
    }
    if (!/^[-+][A-Za-z]+$/.test(text)) break;
    // bash and dash read the invocation options -c, -s and -l with either sign (`bash +lc`
    // is a login shell running a command string); `+i` is taken as `-i`, which only refuses more.
    const letters = text.slice(1);
    // An interactive shell runs ~/.bashrc (or --rcfile) before the command string.
    if (letters.includes("i"))
      startup ??= "an interactive shell (-i) runs its startup files before the command";
    if (letters.includes("l")) startup ??= LOGIN_STARTUP;
    if (letters.includes("c")) commandMode = true;
    if (letters.includes("s")) return { stdin: true };
    // -o and -O take an option name.
    i += /[oO]/.test(letters) ? 2 : 1;
  }
  if (commandMode) {
    if (i >= words.length) return { unknown: "shell -c without a command string" };
    return startup ? { script: i, startup } : { script: i };
  }
  if (startup) return { unknown: startup };
  if (i >= words.length) return { stdin: true };
  return { file: i };
}

/** Git's options before the subcommand; `-C`, `-c`, `--git-dir` and the like take a value. */
const GIT_WITH_ARG = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--exec-path",
  "--super-prefix",
  "--list-cmds",
  "--attr-source",
]);

/** `git -C dir -c k=v --no-pager push` gives `git push`; other commands are returned as they are. */
export function normaliseGit(argv: readonly string[]): string[] {
  if (argv[0] !== "git") return [...argv];
  let i = 1;
  while (i < argv.length) {
    const word = argv[i] as string;
    if (!word.startsWith("-")) break;
    const name = word.split("=")[0] as string;
    if (GIT_WITH_ARG.has(name) && !word.includes("=") && name !== "--exec-path") i += 2;
    else i++;
  }
  return ["git", ...argv.slice(i)];
}

export function commandName(word: string): string {
  return word.includes("/") && !word.endsWith("/") ? path.posix.basename(word) : word;
}

export function literalWord(value: string): WordValue {
  return { value, expanded: false, kinds: [], nested: [], problems: [] };
}

export function optionValue(
  words: readonly WordValue[],
  from: number,
  to: number,
  names: string[],
): string | undefined {
  for (let i = from; i < to; i++) {
    const text = (words[i] as WordValue).value;
    for (const name of names) {
      if (text === name) return (words[i + 1] as WordValue | undefined)?.value;
      if (text.startsWith(`${name}=`)) return text.slice(name.length + 1);
      if (name.length === 2 && text.startsWith(name)) return text.slice(2);
    }
  }
  return undefined;
}

/** An interpreter with no program argument, or `-`, whose standard input is fed: the program comes from there. */
export function readsProgramFromStdin(
  args: readonly WordValue[],
  redirections: readonly ShellRedirection[],
  piped: boolean,
): boolean {
  const fed =
    piped ||
    redirections.some(
      (r) => r.op.endsWith("<") || r.op.endsWith("<<") || r.op.endsWith("<<<") || r.op === "<<-",
    );
  if (!fed) return false;
  const operands = args.filter((w) => !w.value.startsWith("-") || w.value === "-");
  return operands.length === 0 || operands[0]?.value === "-";
}
