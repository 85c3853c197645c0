/**
 * Walks a bash syntax tree and lists every simple command in it, wrappers unwrapped.
 *
 * Invariants (security invariant 1):
 * - every `command` node anywhere in the tree is reported: lists, pipelines,
 *   subshells, groups, substitutions, function bodies, loops, `case` arms, heredoc
 *   bodies, `bash -c` and `eval` strings (parsed again), `find -exec`, `xargs`;
 * - whatever is not resolved statically lands in `unknown` (the command is still
 *   reported, so a deny rule can match what is visible of it);
 * - a syntax error, a missing token or a node type this walker does not handle as a
 *   statement is never silently skipped: its subtree is searched for commands and
 *   errors are `unknown`.
 */
import type { Node, Parser } from "web-tree-sitter";
import type { ShellCommandFacts, ShellRedirection, ShellUnknown, SimpleCommandFacts } from "./facts.js";
import { MAX_NESTING, type Scope, Unwrapper } from "./unwrap.js";
import {
  collectSubstitutions,
  namesVariable,
  RUNS_HIDDEN_CODE,
  wordValue as resolveWord,
  sourceOf,
  type WordValue,
} from "./words.js";
import { literalWord } from "./wrappers.js";

const CONTEXT: Readonly<Record<string, string>> = {
  pipeline: "pipeline",
  list: "list",
  subshell: "subshell",
  compound_statement: "group",
  function_definition: "function",
  for_statement: "loop",
  c_style_for_statement: "loop",
  while_statement: "loop",
  select_statement: "loop",
  if_statement: "if",
  case_statement: "case",
  command_substitution: "substitution",
  process_substitution: "process-substitution",
};
const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);

export class ShellAnalysis {
  readonly commands: SimpleCommandFacts[] = [];
  readonly unknown: ShellUnknown[] = [];
  readonly positions = new Map<SimpleCommandFacts, number[]>();

  private readonly unwrapper = new Unwrapper(this);

  constructor(private readonly parser: Parser) {}

  run(source: string): ShellCommandFacts {
    this.parseAndWalk(source, { context: [], redirections: [], piped: false, depth: 0, at: [] });
    // Nested commands were met first; report them as written (stable: same position keeps emission order).
    const commands = [...this.commands].sort((a, b) =>
      compareAt(this.positions.get(a) ?? [], this.positions.get(b) ?? []),
    );
    return { source, commands, unknown: this.unknown };
  }

  parseAndWalk(source: string, scope: Scope): void {
    const tree = this.parser.parse(source);
    if (!tree) {
      this.unknown.push({ reason: "the parser gave no tree", text: source });
      return;
    }
    try {
      if (tree.rootNode.hasError) this.reportErrors(tree.rootNode);
      this.walk(tree.rootNode, scope);
    } finally {
      tree.delete();
    }
  }

  private reportErrors(node: Node): void {
    if (node.isError) {
      this.unknown.push({ reason: "syntax error", text: node.text });
      return;
    }
    if (node.isMissing) {
      this.unknown.push({
        reason: `incomplete command: missing ${node.type}`,
        text: node.parent?.text ?? "",
      });
      return;
    }
    for (const child of node.children) if (child?.hasError || child?.isMissing) this.reportErrors(child);
  }

  private walk(node: Node, scope: Scope): void {
    const label = CONTEXT[node.type];
    const inner = label ? { ...scope, context: [...scope.context, label] } : scope;
    switch (node.type) {
      case "comment":
        return;
      case "command":
        this.simpleCommand(node, scope);
        return;
      case "redirected_statement":
        this.redirected(node, scope);
        return;
      case "variable_assignment":
      case "variable_assignments":
        this.assignmentOnly(node, scope);
        return;
      case "declaration_command":
      case "unset_command":
      case "test_command":
        this.builtinLike(node, scope);
        return;
      case "command_substitution":
        if (node.text.startsWith("`")) {
          this.backticks(node, inner);
          return;
        }
        break;
      case "process_substitution":
        this.unknown.push({
          reason: "process substitution: its output is read as a file at run time",
          text: node.text,
        });
        break;
      case "arithmetic_expansion":
      case "c_style_for_statement":
        this.arithmetic(node);
        break;
      case "pipeline": {
        let index = 0;
        for (const child of node.namedChildren) {
          if (!child) continue;
          this.walk(child, { ...inner, piped: scope.piped || index > 0 });
          index++;
        }
        return;
      }
    }
    for (const child of node.namedChildren) if (child) this.walk(child, inner);
  }

  /** Inside backticks `\``, `\$` and `\\` are escapes: the grammar misses nested backticks, so parse the body again. */
  private backticks(node: Node, scope: Scope): void {
    const body = node.text.slice(1, node.text.endsWith("`") && node.text.length > 1 ? -1 : undefined);
    if (scope.depth >= MAX_NESTING) {
      this.unknown.push({ reason: "command substitutions nested too deeply", text: node.text });
      return;
    }
    this.parseAndWalk(body.replace(/\\([`$\\])/g, "$1"), {
      ...scope,
      at: [...scope.at, node.startIndex],
      redirections: [],
      piped: false,
      depth: scope.depth + 1,
    });
  }

  /** Resolves a word and reports expansions that can run code hidden in a variable's value. */
  private word(node: Node): WordValue {
    const value = resolveWord(node);
    for (const kind of value.kinds) {
      const reason = RUNS_HIDDEN_CODE[kind];
      if (reason) this.unknown.push({ reason, text: node.text });
    }
    return value;
  }

  private arithmetic(node: Node): void {
    // Arithmetic evaluates variables' values as expressions, and `a[$(cmd)]` in a value runs cmd.
    const body = node.type === "c_style_for_statement" ? node.text.replace(/\bdo\b[\s\S]*$/, "") : node.text;
    if (namesVariable(body.replace(/^\$\(\(|^for/g, "")))
      this.unknown.push({
        reason: "arithmetic on variables (a variable's value can run commands)",
        text: node.text,
      });
  }

  private redirected(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const redirections = [...scope.redirections];
    let body: Node | undefined;
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (REDIRECTS.has(child.type)) redirections.push(this.redirection(child, scope));
      else if (!body) body = child;
      else this.walk(child, scope);
    }
    const next = { ...scope, redirections };
    if (!body) this.unwrapper.emitPlain([], [], next, []);
    else if (body.type === "command") this.simpleCommand(body, next);
    else this.walk(body, next);
  }

  private redirection(node: Node, scope: Scope): ShellRedirection {
    let op = "";
    let target = "";
    let quotedDelimiter = false;
    for (const child of node.children) {
      if (!child) continue;
      if (child.type === "file_descriptor") op += child.text;
      else if (!child.isNamed) op += child.text;
      else if (child.type === "heredoc_start") {
        target = child.text.replace(/['"\\]/g, "");
        quotedDelimiter = target !== child.text;
      } else if (child.type === "heredoc_body" || child.type === "heredoc_end") {
        if (child.type === "heredoc_body") this.heredocBody(child, quotedDelimiter, scope);
      } else {
        const value = this.word(child);
        target = value.value;
        this.nested(value.nested, scope);
      }
    }
    return { op: op.trim(), target };
  }

  /**
   * An unquoted here-doc body runs its substitutions. The grammar sometimes leaves a body
   * unparsed (a leading tab): fewer substitutions found than the text holds is unknown.
   */
  private heredocBody(node: Node, quotedDelimiter: boolean, scope: Scope): void {
    const found = collected(node);
    this.nested(found, scope);
    if (quotedDelimiter) return;
    const text = node.text.replace(/\\[\s\S]/g, "");
    const markers = (text.match(/\$[([]/g)?.length ?? 0) + Math.floor((text.match(/`/g)?.length ?? 0) / 2);
    if (found.length < markers) {
      this.unknown.push({
        reason: "here-doc body with substitutions the parser did not read",
        text: node.text,
      });
    }
  }

  private nested(nodes: readonly Node[], scope: Scope): void {
    for (const node of nodes) this.walk(node, { ...scope, redirections: [], piped: false });
  }

  private assignmentOnly(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const assignments: string[] = [];
    const list = node.type === "variable_assignments" ? node.namedChildren : [node];
    for (const child of list) if (child) assignments.push(this.assignment(child, scope));
    this.unwrapper.emitPlain([], assignments, scope, []);
  }

  private assignment(node: Node, scope: Scope): string {
    const value = node.childForFieldName("value");
    const name = node.childForFieldName("name")?.text ?? "";
    const operator = node.text.slice(name.length).startsWith("+=") ? "+=" : "=";
    if (!value) return `${name}${operator}`;
    const resolved = this.word(value);
    this.nested(resolved.nested, scope);
    return `${name}${operator}${resolved.value}`;
  }

  /** `declare`, `export`, `local`, `unset`, `[[ ]]`: words and assignments, no wrapping. */
  private builtinLike(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const words: WordValue[] = [];
    const assignments: string[] = [];
    if (node.type === "test_command") {
      const keyword = node.text.startsWith("[[") ? "[[" : "[";
      words.push(literalWord(keyword));
      flattenWords(node, words, (n) => this.word(n));
      words.push(literalWord(keyword === "[[" ? "]]" : "]"));
      if (keyword === "[[" && /\s-(?:eq|ne|lt|le|gt|ge)\s/.test(node.text)) this.arithmeticTest(node);
    } else {
      words.push(literalWord(node.text.split(/\s/, 1)[0] ?? ""));
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type === "variable_assignment") {
          const text = this.assignment(child, scope);
          assignments.push(text);
          words.push(literalWord(text));
        } else words.push(this.word(child));
      }
    }
    for (const word of words) this.nested(word.nested, scope);
    this.unwrapper.emitPlain(words, assignments, scope, []);
  }

  private arithmeticTest(node: Node): void {
    const operands = node.text
      .replace(/^\[\[|\]\]$/g, "")
      .split(/\s+-(?:eq|ne|lt|le|gt|ge)\s+|\s*(?:&&|\|\|)\s*/);
    if (operands.some((o) => !/^\s*(?:-?\d+|\$[#?$!0-9]|"\$[#?$!0-9]")?\s*$/.test(o) && /[A-Za-z_]/.test(o)))
      this.unknown.push({
        reason: "arithmetic comparison of variables in [[ ]] (a value can run commands)",
        text: node.text,
      });
  }

  private simpleCommand(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const assignments: string[] = [];
    const redirections = [...scope.redirections];
    const words: WordValue[] = [];
    let previousEnd = -1;
    const source = sourceOf(node);
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "variable_assignment") assignments.push(this.assignment(child, scope));
      else if (REDIRECTS.has(child.type)) redirections.push(this.redirection(child, scope));
      else if (child.type !== "comment") {
        const value = this.word(child);
        this.nested(value.nested, scope);
        // bash joins `a\<newline>b` into one word; the grammar splits it in two.
        const gap = previousEnd >= 0 ? source.slice(previousEnd, child.startIndex).replace(/\\\n/g, "") : " ";
        const last = words[words.length - 1];
        if (last && gap === "") words[words.length - 1] = joinWords(last, value);
        else words.push(value);
        previousEnd = child.endIndex;
      }
    }
    this.unwrapper.unwrap(
      words,
      0,
      { assignments, redirections, wrappers: [], direct: true, context: [] },
      { ...scope, redirections },
    );
  }
}

function joinWords(a: WordValue, b: WordValue): WordValue {
  const kinds = [...new Set([...a.kinds, ...b.kinds])];
  return {
    value: a.value + b.value,
    expanded: a.expanded || b.expanded,
    kinds,
    nested: [...a.nested, ...b.nested],
  };
}

function collected(node: Node): Node[] {
  const out: Node[] = [];
  collectSubstitutions(node, out);
  return out;
}

/** The words of a `[[ ]]` expression, operators included. */
function flattenWords(node: Node, into: WordValue[], word: (node: Node) => WordValue): void {
  for (const child of node.children) {
    if (!child) continue;
    if (!child.isNamed || child.type === "test_operator") {
      if (child.text !== "[[" && child.text !== "]]" && child.text !== "[" && child.text !== "]")
        into.push(literalWord(child.text));
    } else if (/expression$/.test(child.type)) flattenWords(child, into, word);
    else into.push(word(child));
  }
}

function compareAt(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
