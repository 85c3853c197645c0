/**
 * The top of the CLI: program.ts is the command line and loads each command
 * lazily; a command module never imports it back (the shared options and the
 * version live in globals.ts), and `src/commands/` holds only commands - each
 * file one program.ts loads - while their helpers live beside what they serve
 * (`check/`, `doctor/`, `mcp/`, `chat/`, `agent/`). The workspace-wide cycle
 * check, dynamic imports included, is packages/harness/test/structure.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const src = path.resolve(import.meta.dirname, "../src");
const commandsDir = path.join(src, "commands");

/** Every module specifier a file names: static, type-only, re-exports and dynamic `import()`. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      found.push((node.moduleSpecifier as ts.StringLiteral).text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const commandFiles = fs.readdirSync(commandsDir).filter((name) => name.endsWith(".ts"));

describe("the CLI's top", () => {
  it("no command module imports program.ts, not even for a type", () => {
    const offenders = commandFiles.filter((name) =>
      specifiers(path.join(commandsDir, name)).some((s) => /(^|\/)program\.js$/.test(s)),
    );
    expect(commandFiles.length).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
  });

  it("nothing but the entry points (main.ts, the hook daemon's entry) imports program.ts", () => {
    const all = fs
      .readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => path.join(entry.parentPath, entry.name));
    const importers = all.filter((file) =>
      specifiers(file).some((s) => path.resolve(path.dirname(file), s) === path.join(src, "program.js")),
    );
    expect(importers.map((file) => path.relative(src, file)).sort()).toEqual([
      "hook/daemon-entry.ts",
      "main.ts",
    ]);
  });

  it("every module in commands/ is a command program.ts loads; helpers live elsewhere", () => {
    const loaded = new Set(
      specifiers(path.join(src, "program.ts")).flatMap((s) => {
        const match = /^\.\/commands\/([\w-]+)\.js$/.exec(s);
        return match ? [`${match[1]}.ts`] : [];
      }),
    );
    expect(loaded.size).toBeGreaterThan(10);
    expect(commandFiles.filter((name) => !loaded.has(name))).toEqual([]);
  });
});
