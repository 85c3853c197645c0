/**
 * Redirections: operator, descriptor and target of each, and what tree-sitter-bash
 * hangs on them (a here-doc's body, the rest of a pipeline after a here-doc).
 *
 * Invariants (security invariant 1): a target is one word (more words after it mean
 * the grammar took the command's arguments: unknown); an unquoted here-doc body
 * expands like a double-quoted word and is checked the same way; a here-doc ends only
 * at a line that is exactly its delimiter, or the analysis is unknown.
 */
import type { Node } from "web-tree-sitter";
import { ARITHMETIC_REASON, literalArithmetic } from "./arithmetic.js";
import type { ShellRedirection } from "./facts.js";
import { fills, REDIRECT_KINDS, STATEMENTS } from "./syntax.js";
import type { Scope, Unwrapper } from "./unwrap.js";
import { collectSubstitutions, sourceOf, type WordValue } from "./words.js";

/** What the readers of `analyze.ts`'s parts call back into: the walk of one command line. */
export interface WalkPort {
  readonly unwrapper: Unwrapper;
  flag(reason: string, node: Node | string): void;
  word(node: Node, scope: Scope): WordValue;
  walk(node: Node, scope: Scope): void;
  nested(nodes: readonly Node[], scope: Scope): void;
  assignment(node: Node, scope: Scope): string;
}

const REDIRECT_TOKENS = new Set([
  "<",
  ">",
  ">>",
  "&>",
  "&>>",
  "<&",
  ">&",
  ">|",
  "<>",
  "<<",
  "<<-",
  "<<<",
  "<&-",
  ">&-",
]);

export class RedirectionReader {
  constructor(private readonly analysis: WalkPort) {}

  /** One redirection (and, for a here-doc, the rest of the line the grammar hangs on it). */
  read(node: Node, scope: Scope): ShellRedirection[] {
    let op = "";
    let target = "";
    let quotedDelimiter = false;
    const more: ShellRedirection[] = [];
    let after: string | undefined;
    for (const child of node.children) {
      if (!child) continue;
      if (child.isError || child.isMissing) {
        this.analysis.flag(
          child.isError ? "syntax error" : `incomplete redirection: missing ${child.type}`,
          node,
        );
        continue;
      }
      if (child.type === "file_descriptor") op += child.text;
      else if (!child.isNamed) {
        if (node.type === "heredoc_redirect" && ["|", "|&", "&&", "||", ";", "&"].includes(child.type))
          after = child.type;
        else if (REDIRECT_TOKENS.has(child.type)) op += child.text;
        else this.analysis.flag(`unexpected token ${child.type} in a redirection`, node);
      } else if (child.type === "heredoc_start") {
        target = child.text.replace(/['"\\]/g, "");
        quotedDelimiter = target !== child.text;
      } else if (child.type === "heredoc_body") this.heredocBody(child, quotedDelimiter, scope);
      else if (child.type === "heredoc_end") {
        // bash ends a here-doc only at a line that is exactly the delimiter.
        const rest = sourceOf(child).slice(child.endIndex).split("\n", 1)[0] ?? "";
        if (rest !== "" || child.text !== target)
          this.analysis.flag("a here-doc delimiter line with more on it (bash reads on past it)", node);
      } else if (child.type === "comment") continue;
      else if (REDIRECT_KINDS.has(child.type)) more.push(...this.read(child, scope));
      else if (child.type in STATEMENTS && node.type === "heredoc_redirect") {
        // `cat <<EOF | rm x`: the grammar puts the rest of the pipeline or list inside the here-doc.
        const context = after === "|" || after === "|&" ? "pipeline" : "list";
        this.analysis.walk(child, {
          ...scope,
          context: [...scope.context, context],
          redirections: [],
          piped: context === "pipeline",
          at: [...scope.at, child.startIndex],
        });
      } else if (fills(child.type, ["word"])) {
        // bash takes one word as the target; the grammar hangs the command's later arguments here too.
        if (target !== "" && node.type === "file_redirect")
          this.analysis.flag(
            "words after a redirection's target that the parser did not give to the command",
            node,
          );
        target = this.analysis.word(child, scope).value;
      } else this.analysis.flag(`unexpected ${child.type} in a redirection`, node);
    }
    return [{ op: op.trim(), target }, ...more];
  }

  /**
   * An unquoted here-doc body expands like a double-quoted word. The grammar sometimes
   * leaves a body unparsed (a leading tab): fewer expansions found than the text holds is unknown.
   */
  private heredocBody(node: Node, quotedDelimiter: boolean, scope: Scope): void {
    const found: Node[] = [];
    collectSubstitutions(node, found);
    if (quotedDelimiter) {
      this.analysis.nested(found, scope);
      return;
    }
    for (const child of node.namedChildren)
      if (child && child.type !== "heredoc_content") this.analysis.word(child, scope);
    const text = node.text.replace(/\\[\s\S]/g, "");
    for (const match of text.matchAll(/\$\(\(([\s\S]*?)\)\)|\$\[([^\]]*)\]/g))
      if (!literalArithmetic(match[1] ?? match[2] ?? "")) this.analysis.flag(ARITHMETIC_REASON, match[0]);
    // Each kind counted on its own: a `$u` the grammar read must not stand in for a `$(` it did not.
    const substitutions =
      (text.match(/\$\((?!\()/g)?.length ?? 0) + Math.floor((text.match(/`/g)?.length ?? 0) / 2);
    const expansions = text.match(/\$\{/g)?.length ?? 0;
    if (found.length < substitutions || node.descendantsOfType("expansion").length < expansions)
      this.analysis.flag("here-doc body with expansions the parser did not read", node);
  }
}
