/**
 * Docs are code: every TypeScript snippet in docs/ and the READMEs is either a
 * complete file (`ts file=...`), typechecked here against the workspace packages,
 * or explicitly a fragment with a reason. See ./support/doc-snippets.ts.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { packageScaffold } from "../src/scaffold/package-scaffold.js";
import { skillScaffold } from "../src/scaffold/skill-scaffold.js";
import { documents, extractSnippets, typecheckSnippets } from "./support/doc-snippets.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const snippets = documents(root).flatMap((doc) => extractSnippets(root, doc));

describe("documentation snippets", { timeout: 120_000 }, () => {
  it("are each marked as a complete file or as a fragment with a reason", () => {
    const unmarked = snippets
      .filter((s) => !s.file && (s.fragment === undefined || s.fragment === ""))
      .map((s) => `${s.doc}:${s.line} \`\`\`ts ${s.info}`);
    expect(unmarked, "mark each block `ts file=<path>` or `ts fragment: <reason>`").toEqual([]);
  });

  it("typecheck as complete files against the workspace packages", () => {
    const files = snippets.filter((s) => s.file);
    expect(files.length).toBeGreaterThanOrEqual(6);
    const problems = typecheckSnippets(root, snippets, ".cache/rein-doc-snippets");
    expect(problems.map((p) => `${p.doc}:${p.line}: ${p.message}`)).toEqual([]);
  });

  it("the tool-pack guide shows exactly the files `rein init --tool-pack` writes", () => {
    const scaffold = Object.fromEntries(
      packageScaffold({ kind: "tool-pack", packageName: "@acme/rein-tools-words", reinVersion: "0.1.0" }),
    );
    const guide = snippets.filter((s) => s.doc === "docs/guides/tool-pack.md");
    for (const file of ["src/index.ts", "test/index.test.ts"]) {
      expect(`${guide.find((s) => s.file === file)?.code}\n`, file).toBe(scaffold[file]);
    }
  });

  it("the skills guide shows exactly the SKILL.md `rein init --skill` writes", () => {
    const guide = readFileSync(join(root, "docs/guides/skills.md"), "utf8");
    const shown = /```text\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(shown).toBe(skillScaffold("tidy-up")[0]?.[1]);
  });

  it("catch a snippet that does not compile (the checker can fail)", () => {
    const broken = [
      {
        doc: "x.md",
        line: 10,
        info: "file=a.ts",
        file: "a.ts",
        code: 'import { definePlugin } from "@rein/sdk";\nconst n: number = definePlugin;',
      },
    ];
    const problems = typecheckSnippets(root, broken, ".cache/rein-doc-snippets-self");
    expect(problems).toEqual([expect.objectContaining({ doc: "x.md", line: 12 })]);
  });
});
