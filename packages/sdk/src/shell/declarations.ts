/**
 * `declare`/`typeset`/`export`/`readonly`/`local`, `unset`, and `[[ ]]`/`[ ]`: the
 * commands tree-sitter-bash gives node kinds of their own, turned into simple
 * commands whose words the builtin checks of `builtins.ts` then read.
 *
 * Invariant: in `[[ ]]` the operands of `-eq -ne -lt -le -gt -ge` are arithmetic and
 * are understood only when literal; a node inside a test that is neither an
 * expression nor a word is unknown.
 */
import type { Node } from "web-tree-sitter";
import { ARITHMETIC_REASON, literalArithmetic } from "./arithmetic.js";
import type { WalkPort } from "./redirections.js";
import { fills } from "./syntax.js";
import type { Scope } from "./unwrap.js";
import type { WordValue } from "./words.js";
import { literalWord } from "./wrappers.js";

const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

export class DeclarationReader {
  constructor(private readonly analysis: WalkPort) {}

  /** `declare`, `export`, `local`, `unset`, `[[ ]]`: words and assignments, no wrapping. */
  emit(node: Node, outerScope: Scope): void {
    const scope: Scope = { ...outerScope, at: [...outerScope.at, node.startIndex] };
    const words: WordValue[] = [];
    const assignments: string[] = [];
    if (node.type === "test_command") {
      const keyword = node.text.startsWith("[[") ? "[[" : "[";
      words.push(literalWord(keyword));
      this.testWords(node, words, scope, keyword === "[[");
      words.push(literalWord(keyword === "[[" ? "]]" : "]"));
    } else {
      words.push(literalWord(node.text.split(/\s/, 1)[0] ?? ""));
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type === "variable_assignment") {
          const text = this.analysis.assignment(child, scope);
          assignments.push(text);
          words.push(literalWord(text));
        } else if (child.type !== "comment") words.push(this.analysis.word(child, scope));
      }
    }
    this.analysis.unwrapper.emitPlain(words, assignments, scope, []);
  }

  /** The words of a `[[ ]]` or `[ ]` expression, operators included; `[[`'s `-eq` family is arithmetic. */
  private testWords(node: Node, into: WordValue[], scope: Scope, doubleBracket: boolean): void {
    for (const child of node.children) {
      if (!child) continue;
      if (!child.isNamed || child.type === "test_operator") {
        if (!["[[", "]]", "[", "]"].includes(child.text)) into.push(literalWord(child.text));
        continue;
      }
      if (child.type === "binary_expression" && doubleBracket) {
        const operator = child.childForFieldName("operator")?.text ?? "";
        if (ARITHMETIC_TESTS.has(operator)) {
          const left = child.childForFieldName("left")?.text ?? "";
          const right = child.childForFieldName("right")?.text ?? "";
          if (!literalArithmetic(left) || !literalArithmetic(right))
            this.analysis.flag(ARITHMETIC_REASON, child);
        }
      }
      if (/expression$/.test(child.type)) this.testWords(child, into, scope, doubleBracket);
      else if (fills(child.type, ["word"])) into.push(this.analysis.word(child, scope));
      else this.analysis.flag(`unexpected ${child.type} in a test`, node);
    }
  }
}
