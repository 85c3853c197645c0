/**
 * Parses `rein.config.json`. Invariant: a syntax error is one line naming the
 * file, line and column of the first problem (`rein.config.json:3:5: invalid
 * JSON: property name expected`), whatever Node's own message would have said.
 */
import { createRequire } from "node:module";
import type { ParseError } from "jsonc-parser";
import { configError } from "../errors.js";

/** `PropertyNameExpected` -> `property name expected`. */
const words = (code: string) => code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();

export function parseJsonConfig(text: string, file: string): unknown {
  // Loaded with the first JSON config, not with every start (most configs are TypeScript).
  const { parse, printParseErrorCode } = createRequire(import.meta.url)(
    "jsonc-parser",
  ) as typeof import("jsonc-parser");
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { disallowComments: true, allowTrailingComma: false });
  const first = errors[0];
  if (!first) return value;
  const before = text.slice(0, first.offset).split("\n");
  const line = before.length;
  const column = (before.at(-1)?.length ?? 0) + 1;
  throw configError(`invalid JSON at column ${column}: ${words(printParseErrorCode(first.error))}`, {
    file,
    line,
  });
}
