/**
 * The plugin boundary, as structure: every function a plugin supplies (a tap's
 * `fn`, a tool's `inspect` and `execute`, an event listener, a default-verdict
 * function, a plugin's `setup`, `rules` and cleanups) is called in one place, the
 * PluginDriver's `invoke` (hooks/plugin-driver.ts). Code anywhere else in the
 * harness or the SDK hands the function to the driver instead. Found with the
 * type checker, so an alias (`const run = tool.execute; run()`) is caught too.
 *
 * And the hook path (the files a tap's registration and dispatch go through)
 * holds no `as unknown as`, no Proxy and no module-level WeakMap.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");
const DRIVER = path.join(root, "packages/harness/src/hooks/plugin-driver.ts");

/** The files a tap's registration and dispatch pass through (counted in the harness README). */
const HOOK_PATH = [
  "packages/harness/src/hooks/create-hooks.ts",
  "packages/harness/src/hooks/hook-run.ts",
  "packages/harness/src/hooks/hook-table.ts",
  "packages/harness/src/hooks/hook-types.ts",
  "packages/harness/src/hooks/plugin-driver.ts",
  "packages/harness/src/harness/hook-calls.ts",
  "packages/harness/src/harness/tool-decisions.ts",
  "packages/sdk/src/attributed-hooks.ts",
];

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((entry) =>
      entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")
        ? [path.join(entry.parentPath, entry.name)]
        : [],
    );
}

/**
 * Declarations of plugin-supplied functions: `<interface or type alias>.<member>`,
 * or a type alias whose value is the function itself.
 */
const PLUGIN_SUPPLIED = new Set([
  "AgentTool.inspect",
  "AgentTool.execute",
  "RawTap.fn",
  "PluginDefinition.setup",
  "PluginDefinition.rules",
  "EventListener",
  "DefaultToolVerdict",
  "Cleanup",
]);

/** What a declaration is called in PLUGIN_SUPPLIED terms (`Owner.member`, or an alias name). */
function declarationName(node: ts.Node | undefined): string | undefined {
  for (let at = node; at !== undefined; at = at.parent) {
    if (ts.isTypeAliasDeclaration(at)) return at.name.text;
    if ((ts.isPropertySignature(at) || ts.isMethodSignature(at)) && at.name && ts.isIdentifier(at.name)) {
      const owner = at.parent;
      if (ts.isInterfaceDeclaration(owner)) return `${owner.name.text}.${at.name.text}`;
      if (ts.isTypeLiteralNode(owner) && ts.isTypeAliasDeclaration(owner.parent))
        return `${owner.parent.name.text}.${at.name.text}`;
    }
    if (ts.isSourceFile(at)) return undefined;
  }
  return undefined;
}

/**
 * Plugin code the SDK composes into a plugin's own function (so it runs inside the
 * driver's call of that function, under its deadline and tag): `file: callee`.
 */
const COMPOSED = new Set([
  // defineTool: a tool's `inspect` is the author's, plus the facts of its declared paths.
  "packages/sdk/src/tool.ts: own",
]);

/** Member names plugin-supplied functions are read under (anything else needs an alias to be one). */
const MEMBERS = new Set(["inspect", "execute", "fn", "setup", "rules", "listener"]);

/** Whether a callee may be a plugin-supplied function: asking the checker about every call is slow. */
function candidate(callee: ts.Expression): boolean {
  if (ts.isPropertyAccessExpression(callee)) return MEMBERS.has(callee.name.text);
  return ts.isIdentifier(callee);
}

/** What the checker says a callee is: its declarations' names and its type's alias. */
function calleeNames(checker: ts.TypeChecker, callee: ts.Expression): (string | undefined)[] {
  let symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declarations = symbol?.declarations ?? [];
  // A function declared as such (or a class, a method) is the harness's own code, not something handed in.
  const own = (d: ts.Declaration) =>
    ts.isFunctionDeclaration(d) || ts.isClassDeclaration(d) || ts.isMethodDeclaration(d);
  if (declarations.some(own)) return [];
  const type = checker.getTypeAtLocation(callee);
  const signature = type.getCallSignatures()[0]?.declaration;
  return [...declarations.map(declarationName), type.aliasSymbol?.name, declarationName(signature)];
}

/** Calls of plugin-supplied functions in `files`, outside the driver: `file:line: callee`. */
function pluginCalls(files: string[], extra?: { file: string; text: string }): string[] {
  const host = ts.createCompilerHost({});
  const original = host.readFile.bind(host);
  if (extra) host.readFile = (file) => (path.resolve(file) === extra.file ? extra.text : original(file));
  // Only the harness's and the SDK's own sources (`@rein/harness` mapped to its source):
  // the plugin-facing types live there, and leaving dependencies out keeps this fast.
  const program = ts.createProgram(
    extra ? [...files, extra.file] : files,
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noEmit: true,
      noResolve: true,
      lib: ["lib.es2022.d.ts"],
      types: [],
      baseUrl: root,
      paths: { "@rein/harness": ["packages/harness/src/index.ts"] },
    },
    host,
  );
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const source of program.getSourceFiles()) {
    const file = path.resolve(source.fileName);
    if (file === DRIVER || source.isDeclarationFile) continue;
    if (!files.includes(file) && file !== extra?.file) continue;
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        let callee: ts.Expression = node.expression;
        // `fn.call(...)` / `fn.apply(...)`: the function is what `.call` is read from.
        if (ts.isPropertyAccessExpression(callee) && ["call", "apply"].includes(callee.name.text)) {
          callee = callee.expression;
        }
        const names = candidate(callee) ? calleeNames(checker, callee) : [];
        const where = `${path.relative(root, file)}: ${callee.getText(source)}`;
        if (names.some((name) => name !== undefined && PLUGIN_SUPPLIED.has(name)) && !COMPOSED.has(where)) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${path.relative(root, file)}:${line + 1}: ${callee.getText(source)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

const sideFiles = [
  ...sourceFiles(path.join(root, "packages/harness/src")),
  ...sourceFiles(path.join(root, "packages/sdk/src")),
].map((file) => path.resolve(file));

/** A file the check must flag (it exists only in the checked program). */
const PROBE = path.join(root, "packages/harness/src/harness/boundary-probe.ts");
const PROBE_TEXT = `
      import type { AnyAgentTool } from "../tools.js";
      import type { EventListener } from "../events/event-types.js";
      import type { DefaultToolVerdict } from "./live-config.js";
      export async function probe(tool: AnyAgentTool, listener: EventListener, verdict: DefaultToolVerdict) {
        await tool.inspect?.({}, { cwd: "/", sessionId: "s" });
        const run = tool.execute;
        await run({}, {} as never);
        tool.execute.call(tool, {}, {} as never);
        await listener({ type: "settled" } as never);
        if (typeof verdict === "function") verdict({} as never);
      }
    `;

describe("the plugin boundary", () => {
  let found: string[] = [];
  // One program for both checks: building it (type checker included) is the slow part.
  beforeAll(() => {
    found = pluginCalls(sideFiles, { file: PROBE, text: PROBE_TEXT });
  }, 120_000);

  it("no code outside the plugin driver calls a plugin-supplied function", () => {
    expect(found.filter((line) => !line.includes("boundary-probe.ts"))).toEqual([]);
  });

  it("the check sees a direct call, an alias and a .call() outside the driver", () => {
    const probed = found.filter((line) => line.includes("boundary-probe.ts"));
    expect(probed.map((line) => line.replace(/^.*:\d+: /, ""))).toEqual([
      "tool.inspect",
      "run",
      "tool.execute",
      "listener",
      "verdict",
    ]);
  });

  it("the hook path holds no `as unknown as`, Proxy or module-level WeakMap", () => {
    const offences = HOOK_PATH.flatMap((file) => {
      const text = fs.readFileSync(path.join(root, file), "utf8");
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const found: string[] = [];
      if (/as unknown as/.test(text)) found.push(`${file}: as unknown as`);
      if (/\bnew Proxy\b|\bProxy\s*\(/.test(text)) found.push(`${file}: Proxy`);
      for (const statement of source.statements) {
        if (ts.isVariableStatement(statement) && /\bnew\s+WeakMap\b/.test(statement.getText(source)))
          found.push(`${file}: module-level WeakMap`);
      }
      return found;
    });
    expect(offences).toEqual([]);
  });
});
