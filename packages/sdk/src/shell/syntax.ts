/**
 * The table of bash syntax the analysis understands: for each tree-sitter-bash node
 * kind, the tokens and the kinds of children it may have, and how those children are
 * analysed (the `role` the walker in `analyze.ts` gives them).
 *
 * Invariant (security invariant 1): this table is what "understood" means. A node
 * kind not listed here, an `ERROR` or `MISSING` node, or a listed node with a child
 * kind or token not listed for it, is `unknown`; its subtree is still searched for
 * commands so that deny rules see what is visible.
 */

/** Kinds that are parts of a word (see `words.ts` for how each is read). */
export const WORD_KINDS: ReadonlySet<string> = new Set([
  "word",
  "number",
  "raw_string",
  "ansi_c_string",
  "string",
  "translated_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
  "extglob_pattern",
  "regex",
  "variable_name",
  "special_variable_name",
]);

export const REDIRECT_KINDS: ReadonlySet<string> = new Set([
  "file_redirect",
  "heredoc_redirect",
  "herestring_redirect",
]);

/** Children roles: `statement` (a kind of STATEMENTS), `word` (a kind of WORD_KINDS), `redirect`, or a kind by name. */
export interface SyntaxRule {
  /** What the command's `context` records for commands inside. */
  context?: string;
  /** Anonymous tokens this kind may contain. */
  tokens: readonly string[];
  /** Named children this kind may contain (roles or kinds). */
  children: readonly string[];
}

const SEPARATORS = [";", "&", "\n", ";;"];

/** Statement kinds and what each may hold. */
export const STATEMENTS: Readonly<Record<string, SyntaxRule>> = {
  program: { tokens: SEPARATORS, children: ["statement", "comment"] },
  list: { context: "list", tokens: ["&&", "||", ...SEPARATORS], children: ["statement", "comment"] },
  pipeline: { context: "pipeline", tokens: ["|", "|&"], children: ["statement", "comment"] },
  subshell: { context: "subshell", tokens: ["(", ")", ...SEPARATORS], children: ["statement", "comment"] },
  /** `{ ...; }` (context `group`), or `(( ... ))`: arithmetic, understood only when literal. */
  compound_statement: {
    context: "group",
    tokens: ["{", "}", ...SEPARATORS],
    children: ["statement", "comment"],
  },
  negated_command: { tokens: ["!"], children: ["statement"] },
  redirected_statement: { tokens: [], children: ["statement", "redirect"] },
  command: {
    tokens: ["$"],
    children: ["command_name", "variable_assignment", "redirect", "word", "comment"],
  },
  variable_assignment: { tokens: ["=", "+="], children: ["variable_name", "subscript", "word", "array"] },
  variable_assignments: { tokens: [], children: ["variable_assignment"] },
  declaration_command: {
    tokens: ["declare", "typeset", "export", "readonly", "local"],
    children: ["word", "variable_assignment"],
  },
  unset_command: { tokens: ["unset", "unsetenv"], children: ["word"] },
  test_command: {
    tokens: ["[[", "]]", "[", "]"],
    children: ["word", "binary_expression", "unary_expression", "parenthesized_expression", "test_operator"],
  },
  function_definition: {
    context: "function",
    tokens: ["function", "(", ")"],
    children: ["word", "compound_statement", "subshell", "if_statement", "test_command", "redirect"],
  },
  if_statement: {
    context: "if",
    tokens: ["if", "then", "fi", ...SEPARATORS],
    children: ["statement", "elif_clause", "else_clause", "comment"],
  },
  elif_clause: { tokens: ["elif", "then", ...SEPARATORS], children: ["statement", "comment"] },
  else_clause: { tokens: ["else", ...SEPARATORS], children: ["statement", "comment"] },
  while_statement: {
    context: "loop",
    tokens: ["while", "until", ...SEPARATORS],
    children: ["statement", "do_group", "comment"],
  },
  /** `for NAME in WORDS` and `select NAME in WORDS`: the words are arguments, NAME an assignment. */
  for_statement: {
    context: "loop",
    tokens: ["for", "select", "in", ...SEPARATORS],
    children: ["variable_name", "word", "do_group", "comment"],
  },
  /** `for ((a; b; c))`: arithmetic, understood only when literal. */
  c_style_for_statement: {
    context: "loop",
    tokens: ["for", "((", "))", ",", ...SEPARATORS],
    children: ["do_group", "compound_statement", "arithmetic", "comment"],
  },
  do_group: { tokens: ["do", "done", ...SEPARATORS], children: ["statement", "comment"] },
  case_statement: {
    context: "case",
    tokens: ["case", "in", "esac", ...SEPARATORS],
    children: ["word", "case_item", "comment"],
  },
  /** Patterns are words (their substitutions run); the arm's statements follow. */
  case_item: {
    tokens: ["(", ")", "|", ";;", ";&", ";;&", ...SEPARATORS],
    children: ["word", "statement", "comment"],
  },
};

/** Expression kinds inside `[[ ]]` and arithmetic. */
export const EXPRESSION_KINDS: ReadonlySet<string> = new Set([
  "binary_expression",
  "unary_expression",
  "parenthesized_expression",
  "ternary_expression",
  "postfix_expression",
  "test_operator",
  "subscript",
  "variable_assignment",
]);

/** Whether `kind` fills one of the `roles` of a rule. */
export function fills(kind: string, roles: readonly string[]): boolean {
  for (const role of roles) {
    if (role === kind) return true;
    if (role === "statement" && kind in STATEMENTS) return true;
    if (role === "word" && WORD_KINDS.has(kind)) return true;
    if (role === "redirect" && REDIRECT_KINDS.has(kind)) return true;
    if (role === "arithmetic" && (EXPRESSION_KINDS.has(kind) || WORD_KINDS.has(kind))) return true;
  }
  return false;
}
