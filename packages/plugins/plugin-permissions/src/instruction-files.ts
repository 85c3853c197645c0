/**
 * Instruction files: what a later session of an agent reads as its instructions
 * (`AGENTS.md`, `CLAUDE.md`, skills, subagent and command definitions). A model that
 * writes one persists a prompt past the session and past every person who would have
 * read it; so a write to one asks by default (`instructionWrites`), whatever an allow
 * rule, a grant of another call or a permission mode would have said. Rein's own state
 * (`.rein/`, its skills included) is not here: the file tools, the sandbox and the
 * agent hooks refuse it outright.
 *
 * An entry is a file name (`AGENTS.md`: that name at any depth) or a folder
 * (`.claude/skills/`: those segments anywhere in the path, and everything below).
 * Compared without case (a case-insensitive file system reaches `claude.md` as
 * `CLAUDE.md`), on the path as the call spells it and on its canonical path
 * (a symlink to `CLAUDE.md`, or a link named `.claude/skills` to elsewhere, count).
 * A folder's ancestors count too: `mv x .claude` can replace `.claude/skills`.
 *
 * What counts as a write: a file tool of risk `write` (its canonical `paths`), a
 * shell redirection that writes, and every path-like word of a shell command that is
 * not a known reader (`cp`, `mv`, `tee`, `sed -i`, `ln`, `rm`, `touch`, an unknown
 * program: any of them may write what it names), and the files of an `apply_patch`
 * here-document. What a program writes without naming
 * it on its command line (a script, `python -c`) is the OS sandbox's to stop.
 */
import path from "node:path";
import { realpathLoose, type ToolCallFacts } from "@rein/sdk";

/** The default list: Claude Code's, Codex's, Gemini CLI's and the shared `.agents` conventions. */
export const DEFAULT_INSTRUCTION_FILES: readonly string[] = [
  "AGENTS.md",
  "AGENTS.override.md",
  "CLAUDE.md",
  "CLAUDE.local.md",
  "GEMINI.md",
  ".cursorrules",
  ".github/copilot-instructions.md",
  ".agents/skills/",
  ".claude/skills/",
  ".claude/agents/",
  ".claude/commands/",
  ".codex/prompts/",
  ".gemini/commands/",
  ".cursor/rules/",
  ".github/instructions/",
  ".github/prompts/",
];

/** Programs whose path arguments are only read (their redirections still count). */
const READERS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "wc",
  "ls",
  "stat",
  "file",
  "diff",
  "cmp",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "realpath",
  "readlink",
  "basename",
  "dirname",
  "echo",
  "printf",
  "test",
  "[",
  "tree",
  "du",
  "nl",
  "strings",
  "pwd",
  "true",
  "false",
]);
const WRITES = /^(>|>>|>\||&>|&>>|<>|>&)$/;
const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"]);

interface Entry {
  segments: string[];
  folder: boolean;
}

const segmentsOf = (file: string): string[] =>
  file
    .toLowerCase()
    .split(/[\\/]+/)
    .filter((segment) => segment !== "" && segment !== ".");

export type InstructionMatcher = (file: string) => string | undefined;

/** A matcher for `entries`: the entry a path falls under (as given), or undefined. */
export function instructionMatcher(entries: readonly string[]): InstructionMatcher {
  const parsed: (Entry & { text: string })[] = entries.map((text) => ({
    text,
    segments: segmentsOf(text),
    folder: /[\\/]$/.test(text),
  }));
  return (file) => {
    const segments = segmentsOf(file);
    for (const entry of parsed) {
      const n = entry.segments.length;
      if (n === 0) continue;
      if (!entry.folder) {
        if (segments.length >= n && entry.segments.every((s, i) => segments[segments.length - n + i] === s))
          return entry.text;
        continue;
      }
      // The folder's segments anywhere (the folder or below it), or the path ends in a
      // leading part of them (an ancestor: `.claude` for `.claude/skills/`).
      for (let at = 0; at < segments.length; at++) {
        const rest = segments.length - at;
        const k = Math.min(n, rest);
        if (!entry.segments.slice(0, k).every((s, i) => segments[at + i] === s)) continue;
        if (k === n || rest === k) return entry.text;
      }
    }
    return undefined;
  };
}

/** Every spelling of `word` from `dirs` a write could reach: as written, lexical, canonical. */
function spellings(word: string, dirs: readonly string[]): string[] {
  const out = [word];
  for (const dir of path.isAbsolute(word) ? [""] : dirs) {
    const lexical = path.resolve(dir, word);
    out.push(lexical);
    try {
      out.push(realpathLoose(lexical));
    } catch {
      // A loop of links: the spellings above are all there is.
    }
  }
  return out;
}

/** The directories a shell command's relative words could be resolved from (`cwd`, then literal `cd`s). */
function shellDirectories(facts: Readonly<ToolCallFacts>, cwd: string): string[] {
  const dirs = new Set([cwd]);
  for (const simple of facts.command?.commands ?? []) {
    const [program, ...args] = simple.argv;
    if (program === undefined || !DIRECTORY_CHANGES.has(program)) continue;
    const target = args.find((arg) => !arg.startsWith("-"));
    if (target === undefined || target.startsWith("~")) continue;
    for (const dir of [...dirs]) dirs.add(path.resolve(dir, target));
  }
  return [...dirs];
}

const PATCH_PROGRAMS = new Set(["apply_patch", "applypatch"]);

/** The files a patch in Codex's format names (`*** Add File: x`, `*** Move to: y`). */
function patchFiles(text: string): string[] {
  const files: string[] = [];
  for (const line of text.split(/\r?\n|\r/)) {
    const match = /^\s*\*\*\*\s*(?:(?:add|update|delete)\s+file|move\s+to)\s*:\s*(.+?)\s*$/i.exec(line);
    if (match) files.push(match[1] as string);
  }
  return files;
}

/** The words of a shell command that may name a file it writes, with `--opt=FILE` / `of=FILE` split. */
function writtenWords(facts: Readonly<ToolCallFacts>): string[] {
  const words: string[] = [];
  // `apply_patch <<'EOF'`: the files are in the here-document, which only the source holds.
  if (facts.command?.commands.some((simple) => PATCH_PROGRAMS.has(simple.argv[0] ?? "")))
    words.push(...patchFiles(facts.command.source));
  for (const simple of facts.command?.commands ?? []) {
    for (const redirection of simple.redirections ?? []) {
      if (WRITES.test(redirection.op) && !/^&?\d*-?$/.test(redirection.target))
        words.push(redirection.target);
    }
    const [program, ...args] = simple.argv ?? [];
    if (program === undefined || READERS.has(program) || DIRECTORY_CHANGES.has(program)) continue;
    for (const arg of [...args, ...(simple.original ?? []).slice(1)]) {
      if (arg === "" || arg === "-" || arg === "--") continue;
      words.push(arg);
      const eq = arg.indexOf("=");
      if (eq > 0 && eq < arg.length - 1) words.push(arg.slice(eq + 1));
    }
  }
  return words;
}

export interface InstructionWrite {
  /** The path as the call names it. */
  target: string;
  /** The instruction-file entry it falls under. */
  entry: string;
}

/** The first instruction file a call may write, or undefined. `cwd`: where its relative paths resolve. */
export function instructionWrite(
  call: { risk?: string | undefined; facts?: Readonly<ToolCallFacts> | undefined },
  cwd: string,
  match: InstructionMatcher,
): InstructionWrite | undefined {
  const facts = call.facts ?? {};
  if (call.risk === "write") {
    for (const fact of [...(facts.paths ?? []), ...(facts.mentionedPaths ?? [])]) {
      for (const spelling of [fact.input, fact.lexical, fact.absolute]) {
        const entry = spelling === undefined ? undefined : match(spelling);
        if (entry !== undefined) return { target: fact.input, entry };
      }
    }
  }
  if (facts.command === undefined) return undefined;
  const dirs = shellDirectories(facts, cwd);
  for (const word of writtenWords(facts)) {
    for (const spelling of spellings(word, dirs)) {
      const entry = match(spelling);
      if (entry !== undefined) return { target: word, entry };
    }
  }
  return undefined;
}
