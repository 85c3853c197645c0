/**
 * Structure rules that keep the code base navigable: no module in
 * packages/harness/src over 450 lines, and no import cycle in the workspace's
 * sources (runtime imports: relative ones, and `@rein/*` to the package's entry).
 * Type-only imports are erased at compile time and are not edges; a dynamic
 * `import("...")` is one (a circle closed through a lazy import is still a
 * circle). The session entry point (`@rein/harness/session`) reaches no model code.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((entry) =>
      entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")
        ? [path.join(entry.parentPath, entry.name)]
        : [],
    );
}

/** Every package of the workspace: its name and its `src` directory. */
function packages(): { name: string; src: string }[] {
  const dirs = [
    ...fs.readdirSync(path.join(root, "packages")).map((d) => path.join(root, "packages", d)),
    ...fs.readdirSync(path.join(root, "packages/plugins")).map((d) => path.join(root, "packages/plugins", d)),
  ];
  return dirs.flatMap((dir) => {
    const manifest = path.join(dir, "package.json");
    if (!fs.existsSync(manifest)) return [];
    const { name } = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name: string };
    return [{ name, src: path.join(dir, "src") }];
  });
}

/** Module specifiers a file imports at run time: static imports and re-exports, then dynamic `import()`s. */
function runtimeImports(file: string, text = fs.readFileSync(file, "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (!typeOnly) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
      const exported = statement.exportClause;
      const typeOnly =
        statement.isTypeOnly ||
        (exported !== undefined &&
          ts.isNamedExports(exported) &&
          exported.elements.length > 0 &&
          exported.elements.every((element) => element.isTypeOnly));
      if (!typeOnly) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  const dynamic = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, dynamic);
  };
  dynamic(source);
  return specifiers;
}

function resolve(from: string, specifier: string, entries: Map<string, string>): string | undefined {
  if (specifier.startsWith(".")) {
    const base = path.resolve(path.dirname(from), specifier);
    for (const candidate of [
      base.replace(/\.js$/, ".ts"),
      base.replace(/\.js$/, ".tsx"),
      `${base}.ts`,
      path.join(base, "index.ts"),
    ]) {
      if (fs.existsSync(candidate)) return candidate;
    }
    return undefined;
  }
  return entries.get(specifier);
}

/** The cycles of the graph, each as the list of files on it (one cycle per strongly connected component). */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, indices.get(next) as number));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component);
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe("structure", () => {
  it("no file in packages/harness/src is over 450 lines", () => {
    const long = sourceFiles(path.join(root, "packages/harness/src"))
      .map((file) => ({
        file: path.relative(root, file),
        lines: fs.readFileSync(file, "utf8").split("\n").length,
      }))
      .filter(({ lines }) => lines > 450);
    expect(long).toEqual([]);
  });

  it("no import cycle in the workspace's sources", () => {
    const all = packages();
    const entries = new Map<string, string>();
    for (const { name, src } of all) {
      for (const candidate of ["index.ts", "index.tsx"]) {
        if (fs.existsSync(path.join(src, candidate))) entries.set(name, path.join(src, candidate));
      }
      const testing = path.join(src, "testing/index.ts");
      if (fs.existsSync(testing)) entries.set(`${name}/testing`, testing);
    }
    const graph = new Map<string, string[]>();
    for (const { src } of all) {
      for (const file of sourceFiles(src)) {
        const edges = runtimeImports(file).flatMap((specifier) => resolve(file, specifier, entries) ?? []);
        graph.set(file, edges);
      }
    }
    expect(graph.size).toBeGreaterThan(100);
    const found = cycles(graph).map((cycle) => cycle.map((file) => path.relative(root, file)).sort());
    expect(found).toEqual([]);
  });

  it("@rein/harness/session loads no model code: its runtime imports never reach pi-ai", () => {
    // Reopening a session must not pay for pi-ai's providers and model catalogue (~38 MiB of RSS).
    const entry = path.join(root, "packages/harness/src/session/index.ts");
    const seen = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const specifier of runtimeImports(file)) {
        if (!specifier.startsWith(".")) external.add(specifier);
        else visit(resolve(file, specifier, new Map()) as string);
      }
    };
    visit(entry);
    expect(seen.size).toBeGreaterThan(10);
    expect([...external].sort()).toEqual(["node:crypto", "node:fs", "node:os", "node:path"]);
  });

  it("a dynamic import is an edge, a type-only import is not", () => {
    const text = [
      'import type { A } from "./types.js";',
      'import { b } from "./b.js";',
      'export async function load() { return (await import("./lazy.js")).run(); }',
      'type C = typeof import("./erased.js");',
    ].join("\n");
    expect(runtimeImports("x.ts", text)).toEqual(["./b.js", "./lazy.js"]);
  });

  it("the cycle finder finds a cycle (the check can fail)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["c", "b", "a"]]);
  });
});
