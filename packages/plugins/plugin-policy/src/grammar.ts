/**
 * The rule grammar: `tool`, `tool(pattern)`, `*` or `*(pattern)`.
 *
 * Invariant: the pattern is everything between the first `(` and the final `)`,
 * taken literally - parentheses inside the pattern need no escaping, because tool
 * names never contain `(` or `)`. Examples use the same grammar with a concrete
 * argument instead of a pattern: `bash(git push origin main)`, `write(src/a.ts)`.
 */

export interface ParsedSpec {
  /** The tool name, possibly with `*` wildcards (`*` alone: every tool). */
  tool: string;
  /** The text between the parentheses; `undefined` for a bare `tool`. */
  pattern: string | undefined;
}

const SPEC = /^\s*([A-Za-z0-9_\-.*]+)\s*(?:\(([\s\S]*)\))?\s*$/;

/** Parses `tool(pattern)` or `tool`; returns a description of the problem for malformed text. */
export function parseSpec(text: string): ParsedSpec | string {
  const match = SPEC.exec(text);
  if (!match) {
    return `${JSON.stringify(text)} is not "tool" or "tool(pattern)" (e.g. "bash(git push *)", "write(src/**)")`;
  }
  const tool = match[1] as string;
  const pattern = match[2];
  return { tool, pattern };
}

/** A matcher for tool names: exact, or with `*` wildcards. */
export function toolNameMatcher(tool: string): (name: string) => boolean {
  if (tool === "*") return () => true;
  if (!tool.includes("*")) return (name) => name === tool;
  const regex = new RegExp(`^${tool.split("*").map(escapeRegExp).join(".*")}$`);
  return (name) => regex.test(name);
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A command pattern: `*` matches anything (`\*` a literal star), the whole part must
 * match, and a trailing ` *` also matches nothing (`git push *` matches `git push`).
 */
export function commandMatcher(pattern: string): (candidate: string) => boolean {
  const normal = pattern.replace(/\s+/g, " ").trim();
  const optionalTail = normal.endsWith(" *") && !normal.endsWith("\\ *");
  const body = optionalTail ? normal.slice(0, -2) : normal;
  let source = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === "\\" && body[i + 1] === "*") {
      source += "\\*";
      i++;
    } else if (c === "*") source += ".*";
    else source += escapeRegExp(c);
  }
  const regex = new RegExp(`^${source}${optionalTail ? "(?: .*)?" : ""}$`, "s");
  return (candidate) => regex.test(candidate);
}
