/**
 * Extracts the TypeScript snippets of the docs and READMEs and typechecks them.
 * Every ```ts block says what it is in its info string:
 *   ```ts file=src/index.ts      a complete file, typechecked with the others of its document
 *   ```ts fragment: <reason>     part of a file (a signature, a config excerpt), skipped
 * A block with neither is an error, so a snippet cannot silently stop being checked.
 * The files of one document share a folder, so `import ... from "../src/index.js"`
 * between them resolves; workspace packages resolve to their built `.d.ts`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";

export interface Snippet {
  doc: string;
  line: number;
  info: string;
  code: string;
  file?: string;
  fragment?: string;
}

const FENCE = /^```(\S*)(.*)$/;

export function extractSnippets(root: string, doc: string): Snippet[] {
  const lines = readFileSync(join(root, doc), "utf8").split("\n");
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    const close = end === -1 ? lines.length : end;
    if (open[1] === "ts" || open[1] === "typescript") {
      const info = (open[2] ?? "").trim();
      const snippet: Snippet = { doc, line: i + 1, info, code: lines.slice(i + 1, close).join("\n") };
      const file = /(?:^|\s)file=(\S+)/.exec(info)?.[1];
      const fragment = /^fragment(?::\s*(.*))?$/.exec(info);
      if (file) snippet.file = file;
      if (fragment) snippet.fragment = fragment[1]?.trim() || "";
      snippets.push(snippet);
    }
    i = close;
  }
  return snippets;
}

/** docs/**\/*.md and every package, plugin and example README. */
export function documents(root: string): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true })
    .map(String)
    .filter((name) => name.endsWith(".md") && !name.startsWith("reference") && !name.includes("node_modules"))
    .map((name) => join("docs", name));
  const readmes = ["README.md"];
  for (const parent of ["packages", "packages/plugins", "examples"]) {
    for (const name of readdirSync(join(root, parent))) {
      const readme = join(parent, name, "README.md");
      try {
        readFileSync(join(root, readme));
        readmes.push(readme);
      } catch {
        // not a package folder
      }
    }
  }
  return [...docs.sort(), ...readmes.sort()];
}

/** `paths` for every workspace package's exports, pointing at its built declarations. */
function workspacePaths(root: string): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  const folders = ["packages/harness", "packages/sdk", "packages/cli"];
  for (const name of readdirSync(join(root, "packages/plugins"))) folders.push(`packages/plugins/${name}`);
  for (const folder of folders) {
    const pkg = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, { types?: string } | string>;
    };
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      if (typeof target === "string" || !target.types) continue;
      paths[subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`] = [
        join(root, folder, target.types),
      ];
    }
  }
  return paths;
}

export interface SnippetDiagnostic {
  doc: string;
  line: number;
  message: string;
}

/**
 * Typechecks every `file=` snippet; returns problems located at the document's
 * line (the fence line + the line inside the snippet).
 */
export function typecheckSnippets(root: string, snippets: Snippet[], scratch: string): SnippetDiagnostic[] {
  for (const doc of new Set(snippets.map((s) => s.doc))) {
    rmSync(join(root, dirname(doc), "node_modules", scratch), { recursive: true, force: true });
  }
  const origin = new Map<string, Snippet>();
  for (const snippet of snippets) {
    if (!snippet.file) continue;
    // Beside the document (under its node_modules), so its package's dependencies resolve.
    const path = join(
      root,
      dirname(snippet.doc),
      "node_modules",
      scratch,
      snippet.doc.replaceAll("/", "__").replace(/\.md$/, ""),
      snippet.file,
    );
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${snippet.code}\n`);
    origin.set(path, snippet);
  }
  const program = ts.createProgram([...origin.keys()], {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts"],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: ["node"],
    typeRoots: [join(root, "node_modules/@types")],
    baseUrl: root,
    paths: workspacePaths(root),
  });
  const problems: SnippetDiagnostic[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const snippet = diagnostic.file ? origin.get(diagnostic.file.fileName) : undefined;
    if (!snippet || diagnostic.start === undefined) {
      problems.push({
        doc: diagnostic.file ? relative(root, diagnostic.file.fileName) : "(program)",
        line: 0,
        message,
      });
      continue;
    }
    const { line } = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start) ?? { line: 0 };
    problems.push({
      doc: snippet.doc,
      line: snippet.line + 1 + line,
      message: `${snippet.file}: ${message}`,
    });
  }
  return problems;
}
