/**
 * Splits a shell command line into the simple commands a rule is checked against.
 *
 * Separators are `&&`, `||`, `;`, `|` (also `|&`), a background `&` and newlines,
 * outside single and double quotes and not escaped with `\`. `&` in a redirection
 * (`2>&1`, `&>file`) is not a separator. The contents of command substitutions
 * (`$(...)`, backticks) are split too and added as parts of their own, so
 * `echo $(git push)` is checked as `echo $(git push)` and as `git push`.
 *
 * Invariant: this is a conservative lexer, not a shell. It never drops text a
 * command could run: every byte of the input ends up in some part (shell keywords
 * such as `then` and subshell parentheses are trimmed from the start and end of a
 * part only, and the untrimmed text is kept as a match candidate as well).
 */

const LEADING_KEYWORDS = /^(?:(?:if|then|else|elif|do|while|until|!|\{|\()\s*)+/;
const TRAILING_SYNTAX = /(?:\s*[)}])+$/;
const ASSIGNMENT = /^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]*)\s+)+/;

/** The parts of a command line, trimmed, whitespace collapsed, empty parts dropped. */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  collect(command, parts, 0);
  return parts;
}

/** What a rule pattern is matched against for one part: the part, and variants without shell syntax. */
export function partCandidates(part: string): string[] {
  const candidates = new Set<string>([part]);
  const trimmed = part.replace(LEADING_KEYWORDS, "").replace(TRAILING_SYNTAX, "").trim();
  if (trimmed) candidates.add(trimmed);
  const withoutAssignments = trimmed.replace(ASSIGNMENT, "").trim();
  if (withoutAssignments) candidates.add(withoutAssignments);
  return [...candidates];
}

function collect(command: string, parts: string[], depth: number): void {
  let current = "";
  let quote: '"' | "'" | undefined;
  const flush = () => {
    const part = current.replace(/\s+/g, " ").trim();
    if (part) parts.push(part);
    current = "";
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    const next = command[i + 1];
    if (quote === "'") {
      current += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      current += c + (next ?? "");
      i++;
      continue;
    }
    if (c === "$" && next === "(") {
      const end = closingParen(command, i + 1);
      const inner = command.slice(i + 2, end);
      if (depth < 8) collect(inner, parts, depth + 1);
      current += command.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === "`") {
      const end = command.indexOf("`", i + 1);
      const stop = end === -1 ? command.length : end;
      if (depth < 8) collect(command.slice(i + 1, stop), parts, depth + 1);
      current += command.slice(i, stop + 1);
      i = stop;
      continue;
    }
    if (quote === '"') {
      current += c;
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    if ((c === "&" && next === "&") || (c === "|" && (next === "|" || next === "&"))) {
      flush();
      i++;
      continue;
    }
    if (c === "|" || c === ";" || c === "\n" || c === "\r") {
      flush();
      continue;
    }
    if (c === "&") {
      const previous = command[i - 1];
      if (previous === ">" || previous === "<" || next === ">") {
        current += c;
        continue;
      }
      flush();
      continue;
    }
    current += c;
  }
  flush();
}

/** The index of the `)` closing the `(` at `open` (respecting nesting and quotes), or the end. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote: '"' | "'" | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return text.length;
}
