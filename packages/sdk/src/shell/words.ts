/**
 * A word's value the way bash sees it after quote removal: `'a'"b"c` is `abc`,
 * `$'\x67it'` is `git`, `g\it` is `git`, backslash-newline disappears.
 *
 * Invariant: a word whose value depends on the run (a variable, a substitution, an
 * unquoted glob, brace or leading tilde, arithmetic, a translated `$"..."`) is marked `expanded` with the kinds found, and
 * its value keeps the expansion as written; nothing dynamic is ever reported as a
 * plain literal.
 */
import type { Node } from "web-tree-sitter";
import { ARITHMETIC_REASON, literalArithmetic } from "./arithmetic.js";
import { expansionProblem } from "./expansions.js";

export interface WordValue {
  /** Quotes and escapes removed; expansions kept as written. */
  value: string;
  /** Decided at run time. */
  expanded: boolean;
  /** `variable`, `ifs`, `substitution`, `process-substitution`, `arithmetic`, `glob`, `brace`, `tilde`, `translation`. */
  kinds: string[];
  /** Command and process substitutions inside the word, to analyse as commands of their own. */
  nested: Node[];
  /** Why part of the word is not understood (each one an `unknown` of the analysis). */
  problems: string[];
}

interface Acc {
  value: string;
  /** The value with every quoted or escaped character replaced by `_`: where globs and braces are looked for. */
  skeleton: string;
  kinds: Set<string>;
  nested: Node[];
  problems: string[];
}

const sources = new WeakMap<object, string>();

/** The whole text a node was parsed from (cached per tree: `rootNode.text` is costly). */
export function sourceOf(node: Node): string {
  let source = sources.get(node.tree);
  if (source === undefined) {
    source = node.tree.rootNode.text;
    sources.set(node.tree, source);
  }
  return source;
}

export function wordValue(node: Node): WordValue {
  const acc: Acc = { value: "", skeleton: "", kinds: new Set(), nested: [], problems: [] };
  part(node, acc);
  if (/[*?]|\[.*\]/.test(acc.skeleton)) acc.kinds.add("glob");
  // `~`, `~user`, `~+` become a home folder or $PWD: a deny rule on the real path must still see it.
  if (acc.skeleton.startsWith("~")) acc.kinds.add("tilde");
  if (/\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}/.test(acc.skeleton)) acc.kinds.add("brace");
  return {
    value: acc.value,
    expanded: acc.kinds.size > 0,
    kinds: [...acc.kinds],
    nested: acc.nested,
    problems: acc.problems,
  };
}

/**
 * The word parts the analysis understands, each with how its children are read. A
 * part of any other kind, or an understood part with a child it does not expect, is a
 * problem: never a plain literal.
 */
function part(node: Node, acc: Acc): void {
  if (node.isError || node.isMissing) {
    problem(node, acc, node.isError ? "syntax error" : `incomplete word: missing ${node.type}`);
    return;
  }
  switch (node.type) {
    case "command_name":
    case "concatenation":
      sequence(node, node.startIndex, node.endIndex, acc, unquoted);
      return;
    case "word":
    case "number":
    case "variable_name":
    case "special_variable_name":
      if (node.namedChildCount > 0) {
        // `number` can hold expansions (`0x$x`): read it as the sequence it is.
        sequence(node, node.startIndex, node.endIndex, acc, unquoted);
        return;
      }
      if (misread(node.text)) acc.problems.push(MISPARSE);
      unquoted(node.text, acc);
      return;
    case "raw_string":
      literal(node.text.slice(1, -1), acc);
      return;
    case "ansi_c_string": {
      // bash cuts the string at a NUL: `$'rm\0x'` runs rm.
      literal(decodeAnsiC(node.text.slice(2, -1)).split("\0", 1)[0] as string, acc);
      return;
    }
    case "string":
      doubleQuoted(node, node.startIndex + 1, node.endIndex - 1, acc);
      return;
    case "translated_string":
      translated(node, node.startIndex + 2, node.endIndex - 1, acc);
      return;
    case "simple_expansion":
      dynamic(node, acc, /^\s*\$IFS\b/.test(node.text) ? "ifs" : "variable");
      return;
    case "expansion":
      expansion(node, acc);
      return;
    case "command_substitution":
      dynamic(node, acc, "substitution");
      // bash reads `$((` as arithmetic when it can; the grammar sometimes reads a substitution of a subshell.
      if (node.text.startsWith("$((")) acc.problems.push(AMBIGUOUS_ARITHMETIC);
      acc.nested.push(node);
      return;
    case "process_substitution":
      dynamic(node, acc, "process-substitution");
      acc.problems.push("process substitution: its output is read as a file at run time");
      acc.nested.push(node);
      return;
    case "arithmetic_expansion":
      dynamic(node, acc, "arithmetic");
      if (!literalArithmetic(arithmeticBody(node.text))) acc.problems.push(ARITHMETIC_REASON);
      collectSubstitutions(node, acc.nested);
      return;
    case "brace_expression":
      dynamic(node, acc, "brace");
      return;
    case "extglob_pattern":
      dynamic(node, acc, "glob");
      return;
    case "regex":
      // A pattern inside `${x/.../...}` or after `=~`: the grammar does not parse substitutions in it.
      if (/[$`]/.test(node.text)) problem(node, acc, "a pattern with expansions the parser did not read");
      else unquoted(node.text, acc);
      return;
    default:
      problem(node, acc, `syntax the analysis does not understand in a word: ${node.type}`);
  }
}

/** The text between `$((`/`$[` and `))`/`]`. */
function arithmeticBody(text: string): string {
  if (text.startsWith("$((")) return text.slice(3, text.endsWith("))") ? -2 : undefined);
  if (text.startsWith("$[")) return text.slice(2, text.endsWith("]") ? -1 : undefined);
  return text;
}

function problem(node: Node, acc: Acc, reason: string): void {
  dynamic(node, acc, "unknown");
  acc.problems.push(reason);
  collectSubstitutions(node, acc.nested);
}

export const AMBIGUOUS_ARITHMETIC =
  "`$((` or `((` that the parser read as a subshell where bash reads arithmetic (a variable's value can run commands)";

const MISPARSE =
  "the parser read a word where bash would not (an unescaped blank, operator or substitution inside it)";

/**
 * bash never puts an unescaped blank, operator, backtick or `$(` inside a plain word: if
 * the grammar did, it and bash disagree about what runs.
 */
function misread(text: string, insideExpansion = false): boolean {
  // Inside `${...}` blanks and operators are plain text; substitutions still run.
  const pattern = insideExpansion
    ? /(?:^|[^\\])(?:\\\\)*(?:`|\$[({[])/
    : /(?:^|[^\\])(?:\\\\)*(?:[\s;|&()<>`]|\$[({[])/;
  return pattern.test(text);
}

/** `${...}`: the form must be in the table of `expansions.ts`; its operand is read as a word. */
function expansion(node: Node, acc: Acc): void {
  // Inside double quotes the grammar starts an expansion at the blank before it.
  const text = node.text.replace(/^\s+/, "");
  dynamic(node, acc, /^\$\{IFS\b/.test(text) ? "ifs" : "variable");
  const reason = expansionProblem(text);
  if (reason) acc.problems.push(reason);
  const operand: Acc = { value: "", skeleton: "", kinds: new Set(), nested: [], problems: [] };
  // In `"${x:-'$(cmd)'}"` (and a here-doc) the single quotes are plain text and cmd runs; the grammar reads quotes.
  if (quotedContext(node) && node.descendantsOfType(["raw_string", "ansi_c_string"]).length > 0)
    acc.problems.push(
      "quotes inside a double-quoted expansion (bash reads them differently than the parser)",
    );
  let first = true;
  for (const child of node.namedChildren) {
    if (!child) continue;
    const head = first && HEAD_KINDS.has(child.type);
    first = false;
    if (head) continue;
    if (child.type === "word" && misread(child.text, true)) acc.problems.push(MISPARSE);
    else if (child.type === "subscript") acc.problems.push("a subscript inside an expansion's operand");
    else part(child, operand);
  }
  acc.nested.push(...operand.nested);
  acc.problems.push(...operand.problems);
}

/** Whether the node sits inside double quotes or a here-doc body. */
function quotedContext(node: Node): boolean {
  for (let up = node.parent; up; up = up.parent)
    if (up.type === "string" || up.type === "heredoc_body" || up.type === "translated_string") return true;
  return false;
}

const HEAD_KINDS = new Set(["variable_name", "special_variable_name", "subscript"]);

/** Arithmetic text that names a variable (not only numbers, operators and `$#`, `$?`...). */
export function namesVariable(text: string): boolean {
  return !literalArithmetic(text);
}

function dynamic(node: Node, acc: Acc, kind: string): void {
  acc.kinds.add(kind);
  acc.value += node.text;
  acc.skeleton += "_".repeat(node.text.length);
}

/** Walks `[start, end)` of `node`'s children; text between children goes through `gap`. */
function sequence(
  node: Node,
  start: number,
  end: number,
  acc: Acc,
  gap: (text: string, acc: Acc) => void,
): void {
  const source = sourceOf(node);
  let at = start;
  for (const child of node.children) {
    if (!child || child.endIndex <= start || child.startIndex >= end) continue;
    if (child.startIndex > at) gap(source.slice(at, child.startIndex), acc);
    if (isTranslationDollar(child)) {
      // `a$"b"`: the grammar splits a translated string into `$` and a string.
      acc.kinds.add("translation");
      at = child.endIndex;
      continue;
    }
    if (child.isNamed) part(child, acc);
    else gap(source.slice(Math.max(child.startIndex, at), Math.min(child.endIndex, end)), acc);
    at = Math.max(at, child.endIndex);
  }
  if (at < end) gap(source.slice(at, end), acc);
}

/** The `$` of a `$"..."` the grammar split into a `$` token and a string. */
export function isTranslationDollar(child: Node): boolean {
  const next = child.nextSibling;
  const string = next?.type === "concatenation" ? next.firstChild : next;
  return child.type === "$" && string?.type === "string" && string.startIndex === child.endIndex;
}

/** Whether `child` is the `$` (or the string) of a `$"..."` the grammar split in two. */
export function translatedString(child: Node): "dollar" | "string" | undefined {
  if (isTranslationDollar(child)) return "dollar";
  const previous = child.previousSibling;
  if (previous && isTranslationDollar(previous)) return "string";
  return undefined;
}

/** `cmd {fd}>file`: bash opens the file and assigns its descriptor to fd; the grammar reads `{fd}` as a word. */
export function isVariableRedirection(child: Node, source: string): boolean {
  // The redirection may sit in the command or in the statement around it: look at the text.
  return (
    child.isNamed &&
    /^\{[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\}$/.test(child.text) &&
    /^[<>]/.test(source.slice(child.endIndex))
  );
}

/**
 * `$"..."` is looked up in the message catalogue of `TEXTDOMAIN` in `TEXTDOMAINDIR`: the
 * value is the text as written only when no catalogue translates it, so it is decided at run time.
 */
function translated(node: Node, start: number, end: number, acc: Acc): void {
  doubleQuoted(node, start, end, acc);
  acc.kinds.add("translation");
}

function doubleQuoted(node: Node, start: number, end: number, acc: Acc): void {
  const source = sourceOf(node);
  let at = start;
  for (const child of node.children) {
    if (!child?.isNamed || child.endIndex <= start || child.startIndex >= end) continue;
    if (child.startIndex > at) insideDouble(source.slice(at, child.startIndex), acc);
    if (child.type === "string_content") insideDouble(child.text, acc);
    else part(child, acc);
    at = child.endIndex;
  }
  if (at < end) insideDouble(source.slice(at, end), acc);
}

/** Unquoted text: `\c` is `c`, backslash-newline vanishes. */
function unquoted(text: string, acc: Acc): void {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "\\" && i + 1 < text.length) {
      const next = text[i + 1] as string;
      i++;
      if (next === "\n") continue;
      acc.value += next;
      acc.skeleton += "_";
      continue;
    }
    acc.value += c;
    acc.skeleton += c;
  }
}

/** Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes. */
function insideDouble(text: string, acc: Acc): void {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
      i++;
      if (next !== "\n") out += next;
      continue;
    }
    out += c;
  }
  literal(out, acc);
}

function literal(text: string, acc: Acc): void {
  acc.value += text;
  acc.skeleton += "_".repeat(text.length);
}

const SUBSTITUTIONS = new Set(["command_substitution", "process_substitution"]);

export function collectSubstitutions(node: Node, into: Node[]): void {
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (SUBSTITUTIONS.has(child.type)) into.push(child);
    else collectSubstitutions(child, into);
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decodes the body of `$'...'` as bash does. */
export function decodeAnsiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const next = body[i + 1] as string;
    i++;
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const numeric = (digits: RegExp, max: number, radix: number, skip: number) => {
      let j = i + skip;
      let text = "";
      while (j < body.length && text.length < max && digits.test(body[j] as string)) text += body[j++];
      if (text === "") return false;
      const code = Number.parseInt(text, radix);
      out += code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
      i = j - 1;
      return true;
    };
    if (/[0-7]/.test(next) && numeric(/[0-7]/, 3, 8, 0)) continue;
    if (next === "x" && numeric(/[0-9a-fA-F]/, 2, 16, 1)) continue;
    if (next === "u" && numeric(/[0-9a-fA-F]/, 4, 16, 1)) continue;
    if (next === "U" && numeric(/[0-9a-fA-F]/, 8, 16, 1)) continue;
    if (next === "c" && i + 1 < body.length) {
      out += String.fromCharCode((body.charCodeAt(i + 1) & 0x1f) >>> 0);
      i++;
      continue;
    }
    out += `\\${next}`;
  }
  return out;
}
