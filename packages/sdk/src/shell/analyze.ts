/**
 * Walks a bash syntax tree and lists every simple command in it, wrappers unwrapped,
 * by the table of understood syntax in `syntax.ts`.
 *
 * Invariants (security invariant 1):
 * - every `command` node anywhere in the tree is reported: lists, pipelines,
 *   subshells, groups, substitutions, function bodies, loops, `case` arms, heredoc
 *   bodies, `bash -c` and `eval` strings (parsed again), `find -exec`, `xargs`;
 * - a node kind outside the table, an `ERROR` or `MISSING` node, a listed node with a
 *   child or token the table does not list, and arithmetic or a variable name that is
 *   not literal, is `unknown` (the commands inside are still reported, so a deny rule
 *   can match what is visible);
 * - a `for`/`select` loop's words are analysed like arguments and its variable is an
 *   assignment (an assignment-only command `NAME=word` per word).
 */
import type { Node, Parser } from "web-tree-sitter";
import { ARITHMETIC_REASON, literalArithmetic, literalSubscript, plainName } from "./arithmetic.js";
import { DeclarationReader } from "./declarations.js";
import type { ShellCommandFacts, ShellRedirection, ShellUnknown, SimpleCommandFacts } from "./facts.js";
import { RedirectionReader } from "./redirections.js";
import { fills, REDIRECT_KINDS, STATEMENTS } from "./syntax.js";
import { MAX_NESTING, type Scope, Unwrapper } from "./unwrap.js";
import {
  AMBIGUOUS_ARITHMETIC,
  collectSubstitutions,
  isVariableRedirection,
  wordValue as resolveWord,
  sourceOf,
  translatedString,
  type WordValue,
} from "./words.js";
import { literalWord } from "./wrappers.js";

export class ShellAnalysis {
  readonly commands: SimpleCommandFacts[] = [];
  readonly unknown: ShellUnknown[] = [];
  readonly positions = new Map<SimpleCommandFacts, number[]>();

  readonly unwrapper = new Unwrapper(this);
  private readonly redirections = new RedirectionReader(this);
  private readonly declarations = new DeclarationReader(this);

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
      // Errors the walk does not reach (inside expressions or here-docs) are reported too.
      if (tree.rootNode.hasError) this.reportErrors(tree.rootNode);
      this.walk(tree.rootNode, scope);
    } finally {
      tree.delete();
    }
  }

  private reportErrors(node: Node): void {
    if (node.isError || node.isMissing) {
      this.flag(
        node.isError ? "syntax error" : `incomplete command: missing ${node.type}`,
        node.parent ?? node,
      );
      return;
    }
    for (const child of node.children) if (child?.hasError || child?.isMissing) this.reportErrors(child);
  }

  flag(reason: string, node: Node | string): void {
    this.unknown.push({ reason, text: typeof node === "string" ? node : node.text });
  }

  walk(node: Node, scope: Scope): void {
    if (node.isError || node.isMissing) {
      this.search(node, scope);
      return;
    }
    const rule = STATEMENTS[node.type];
    if (!rule) {
      if (node.type !== "comment") {
        this.flag(`syntax the analysis does not understand: ${node.type}`, node);
        this.search(node, scope);
      }
      return;
    }
    for (const child of node.children) {
      if (!child) continue;
      if (child.isError || child.isMissing) continue; // reported when walked
      const fits = child.isNamed ? fills(child.type, rule.children) : rule.tokens.includes(child.type);
      if (!fits && !(node.type === "compound_statement" && isArithmeticCommand(node)))
        this.flag(`unexpected ${child.isNamed ? child.type : `token ${child.type}`} in ${node.type}`, node);
    }
    // `((cmd) )` is two subshells to the grammar, arithmetic first to bash.
    if (node.type === "subshell" && node.text.startsWith("((")) this.flag(AMBIGUOUS_ARITHMETIC, node);
    const inner = rule.context ? { ...scope, context: [...scope.context, rule.context] } : scope;
    switch (node.type) {
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
      case "compound_statement":
        if (isArithmeticCommand(node)) {
          this.arithmetic(node, node.text.slice(2, -2), scope);
          return;
        }
        break;
      case "c_style_for_statement":
        this.cStyleFor(node, inner);
        return;
      case "for_statement":
        this.forLoop(node, inner);
        return;
      case "case_statement":
      case "case_item":
        this.caseParts(node, inner);
        return;
      case "function_definition":
        this.functionDefinition(node, inner);
        return;
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

  /** Whether a command emitted since `before` carries all of `redirections` (the same objects). */
  private carried(before: number, redirections: readonly ShellRedirection[]): boolean {
    return this.commands.slice(before).some((c) => redirections.every((r) => c.redirections.includes(r)));
  }

  /** Inside something not understood: report every command still visible, never skip one. */
  private search(node: Node, scope: Scope): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type in STATEMENTS) this.walk(child, scope);
      else if (child.type === "command_substitution" || child.type === "process_substitution")
        this.substitution(child, scope);
      else this.search(child, scope);
    }
  }

  /** `$(...)`, `<(...)`, backticks: commands of their own. */
  private substitution(node: Node, scope: Scope): void {
    if (node.text.startsWith("$((")) this.flag(AMBIGUOUS_ARITHMETIC, node);
    const label = node.type === "command_substitution" ? "substitution" : "process-substitution";
    const inner = { ...scope, context: [...scope.context, label], redirections: [], piped: false };
    if (node.type === "command_substitution" && node.text.startsWith("`")) {
      this.backticks(node, inner);
      return;
    }
    for (const child of node.children) {
      if (!child) continue;
      if (
        child.isNamed &&
        child.type !== "comment" &&
        !(child.type in STATEMENTS) &&
        !REDIRECT_KINDS.has(child.type)
      )
        this.flag(`unexpected ${child.type} in ${node.type}`, node);
      if (child.isNamed) {
        if (REDIRECT_KINDS.has(child.type)) this.redirection(child, inner);
        else this.walk(child, inner);
      }
    }
  }

  /** Inside backticks `\``, `\$` and `\\` are escapes: the grammar misses nested backticks, so parse the body again. */
  private backticks(node: Node, scope: Scope): void {
    const body = node.text.slice(1, node.text.endsWith("`") && node.text.length > 1 ? -1 : undefined);
    if (scope.depth >= MAX_NESTING) {
      this.flag("command substitutions nested too deeply", node);
      return;
    }
    // A backtick inside the body that no backslash escapes: the grammar joined two substitutions.
    if (/(?:^|[^\\])(?:\\\\)*`/.test(body) || !node.text.endsWith("`") || node.text.length < 2)
      this.flag("backticks the parser did not delimit as bash does", node);
    this.parseAndWalk(body.replace(/\\([`$\\])/g, "$1"), {
      ...scope,
      at: [...scope.at, node.startIndex],
      redirections: [],
      piped: false,
      depth: scope.depth + 1,
    });
  }

  /** Resolves a word, reports what is not understood in it and walks its substitutions. */
  word(node: Node, scope: Scope): WordValue {
    const value = resolveWord(node);
    for (const reason of value.problems) this.flag(reason, node);
    this.nested(value.nested, scope);
    return value;
  }

  /** Arithmetic (`((...))`, `for ((...))`): understood only when every operand is a literal. */
  private arithmetic(node: Node, text: string, scope: Scope): void {
    if (!literalArithmetic(text)) this.flag(ARITHMETIC_REASON, node);
    const found: Node[] = [];
    collectSubstitutions(node, found);
    this.nested(found, scope);
  }

  private cStyleFor(node: Node, scope: Scope): void {
    const body = node.childForFieldName("body");
    const head = sourceOf(node).slice(node.startIndex, body ? body.startIndex : node.endIndex);
    const found: Node[] = [];
    for (const child of node.namedChildren) if (child && child !== body) collectSubstitutions(child, found);
    if (!literalArithmetic(head.replace(/^for\s*\(\(|\)\)[\s;]*$/g, "").replace(/;/g, ",")))
      this.flag(ARITHMETIC_REASON, head);
    this.nested(found, scope);
    if (body) this.walk(body, scope);
  }

  /** `for NAME in WORDS`: words are arguments (their substitutions run), NAME is assigned each one. */
  private forLoop(node: Node, scope: Scope): void {
    const variable = node.childForFieldName("variable");
    const name = variable?.text ?? "";
    if (!plainName(name)) this.flag("a loop variable that is not a plain name", node);
    const assignments: string[] = [];
    let hasIn = false;
    for (const child of node.children) {
      if (!child) continue;
      if (!child.isNamed && child.type === "in") hasIn = true;
      const isVariable = variable !== null && child.startIndex === variable.startIndex;
      if (!child.isNamed || isVariable || child.type === "do_group" || child.type === "comment") continue;
      assignments.push(`${name}=${this.word(child, scope).value}`);
    }
    if (!hasIn) assignments.push(`${name}=$@`);
    if (assignments.length > 0)
      this.unwrapper.emitPlain([], assignments, { ...scope, at: [...scope.at, node.startIndex] }, []);
    const body = node.childForFieldName("body");
    if (body) this.walk(body, scope);
  }

  /** `case WORD in PATTERN) ...`: the word and the patterns expand (and may run substitutions). */
  private caseParts(node: Node, scope: Scope): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type in STATEMENTS || child.type === "case_item") this.walk(child, scope);
      else if (child.type !== "comment") this.word(child, scope);
    }
  }

  private functionDefinition(node: Node, scope: Scope): void {
    const name = node.childForFieldName("name");
    if (name) {
      const value = this.word(name, scope);
      if (value.expanded) this.flag("a function name decided at run time", name);
    }
    const redirections = [...scope.redirections];
    for (const child of node.namedChildren)
      if (child && REDIRECT_KINDS.has(child.type)) redirections.push(...this.redirection(child, scope));
    const body = node.childForFieldName("body");
    const before = this.commands.length;
    if (body) this.walk(body, { ...scope, redirections });
    if (redirections.length > scope.redirections.length && !this.carried(before, redirections))
      this.unwrapper.emitPlain([], [], { ...scope, redirections, at: [...scope.at, node.startIndex] }, []);
  }

  private redirected(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const redirections = [...scope.redirections];
    let body: Node | undefined;
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (REDIRECT_KINDS.has(child.type)) redirections.push(...this.redirection(child, scope));
      else if (!body) body = child;
      else this.walk(child, scope);
    }
    const next = { ...scope, redirections };
    const before = this.commands.length;
    if (body) this.walk(body, next);
    // `(( 1 )) > f` and `case $(a) in *) (( 1 ));; esac > f` still open f: list it when no command carries it.
    if (!this.carried(before, redirections)) this.unwrapper.emitPlain([], [], next, []);
  }

  redirection(node: Node, scope: Scope): ShellRedirection[] {
    return this.redirections.read(node, scope);
  }

  private builtinLike(node: Node, scope: Scope): void {
    this.declarations.emit(node, scope);
  }

  nested(nodes: readonly Node[], scope: Scope): void {
    for (const node of nodes) this.substitution(node, { ...scope, redirections: [], piped: false });
  }

  private assignmentOnly(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const assignments: string[] = [];
    const list = node.type === "variable_assignments" ? node.namedChildren : [node];
    for (const child of list) if (child) assignments.push(this.assignment(child, scope));
    this.unwrapper.emitPlain([], assignments, scope, []);
  }

  assignment(node: Node, scope: Scope): string {
    const value = node.childForFieldName("value");
    const nameNode = node.childForFieldName("name");
    const name = nameNode?.text ?? "";
    if (nameNode?.type === "subscript") {
      const index = nameNode.childForFieldName("index");
      if (!index || !literalSubscript(index.text))
        this.flag(
          "array subscript that is not a literal (it is evaluated as arithmetic and can run commands)",
          node,
        );
    } else if (!plainName(name)) this.flag("an assignment to a name the analysis does not understand", node);
    const operator = node.text.slice(name.length).startsWith("+=") ? "+=" : "=";
    if (!value) return `${name}${operator}`;
    if (value.type === "array") return `${name}${operator}${this.array(value, scope)}`;
    return `${name}${operator}${this.word(value, scope).value}`;
  }

  /** `(a b [3]=c)`: elements are words; a `[index]=` element's index is arithmetic, so it must be literal. */
  private array(node: Node, scope: Scope): string {
    const values: string[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      const keyed = /^\[([^\]]*)\]\+?=/.exec(child.text);
      if (child.text.startsWith("[") && (!keyed || !literalSubscript(keyed[1] as string)))
        this.flag(
          "array subscript that is not a literal (it is evaluated as arithmetic and can run commands)",
          child,
        );
      values.push(this.word(child, scope).value);
    }
    return `(${values.join(" ")})`;
  }

  private simpleCommand(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const assignments: string[] = [];
    const redirections = [...scope.redirections];
    const words: WordValue[] = [];
    let previousEnd = -1;
    const source = sourceOf(node);
    for (const child of node.children) {
      if (!child || child.isError || child.isMissing) continue;
      if (child.type === "variable_assignment") assignments.push(this.assignment(child, scope));
      else if (REDIRECT_KINDS.has(child.type)) redirections.push(...this.redirection(child, scope));
      else if (child.type === "comment") continue;
      else if (child.isNamed || child.type === "$") {
        let value = child.isNamed ? this.word(child, scope) : literalWord("$");
        const translation = translatedString(child);
        // `git $"push"`: the grammar splits a translated string into `$` and a string; bash runs the translation.
        if (translation === "dollar") value = literalWord("");
        if (translation === "string")
          value = { ...value, expanded: true, kinds: [...value.kinds, "translation"] };
        if (isVariableRedirection(child, source))
          this.flag("a {NAME} redirection sets a variable (the parser reads it as an argument)", node);
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

/** `(( ... ))` is parsed as a compound statement whose first token is `((`. */
function isArithmeticCommand(node: Node): boolean {
  return node.firstChild?.type === "((";
}

function joinWords(a: WordValue, b: WordValue): WordValue {
  const kinds = [...new Set([...a.kinds, ...b.kinds])];
  return {
    value: a.value + b.value,
    expanded: a.expanded || b.expanded,
    kinds,
    nested: [...a.nested, ...b.nested],
    problems: [...a.problems, ...b.problems],
  };
}

function compareAt(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
