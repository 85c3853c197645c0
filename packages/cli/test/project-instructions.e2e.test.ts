/**
 * AGENTS.md through the built binary, asserted on what a real HTTP model endpoint
 * on loopback received: the root's file (CLAUDE.md only as a fallback) and the
 * folders down to the working directory are in the first request's system prompt;
 * a nested folder's file joins at the next turn after a tool touched a path below
 * it; the session records which files were sent with their sha256; a file that
 * links outside the project is never read.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const toolsFs = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "plugins",
  "tools-fs",
  "dist",
  "index.js",
);

/** A tool declaring its path argument, as @rein/tools-fs's do. */
const READ_TOOL = `import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "reader",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "read_file",
      description: "Read a file",
      parameters: Type.Object({ path: Type.String() }),
      paths: { path: "file" },
      risk: "read",
      execute: async (args, ctx) => ({ content: [{ type: "text", text: readFileSync(join(ctx.cwd, args.path), "utf8") }] }),
    }));
  },
});
`;

const config = (baseUrl: string) => `export default {
  model: "local",
  models: [{ id: "local", baseUrl: "${baseUrl}" }],
  systemPrompt: "Base prompt.",
  plugins: ["./reader.ts"],
};
`;

const systemOf = (body: Record<string, unknown>) => {
  const messages = body.messages as { role: string; content: unknown }[];
  const system = messages.find((m) => m.role === "system" || m.role === "developer");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
};

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

function instructionEntries(dir: string) {
  const folder = join(dir, ".rein/sessions");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  return readFileSync(join(folder, file as string), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === "custom" && e.customType === "rein.instructions")
    .map((e) => e.data.files as { path: string; sha256: string; loadedBy: string }[]);
}

describe("AGENTS.md", { timeout: 60_000 }, () => {
  it("root and working-directory files reach the first request; a nested one joins after a tool touches its folder", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { name: "read_file", args: { path: "../pkg/api/notes.txt" }, id: "call_1" } },
      { text: "done" },
    ]);
    try {
      const root = "Root rule: write tests first.";
      const dir = project({
        "AGENTS.md": root,
        "CLAUDE.md": "Claude-only text that AGENTS.md shadows.",
        "app/CLAUDE.md": "App rule via the CLAUDE.md fallback.",
        "pkg/api/AGENTS.md": "API rule: never break the wire format.",
        "pkg/api/notes.txt": "notes",
        "reader.ts": READ_TOOL,
      });
      writeFileSync(join(dir, "rein.config.ts"), config(server.baseUrl));
      const result = await rein(["-C", "app", "run", "read the notes"], dir);
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      expect(server.requests).toHaveLength(2);

      const first = systemOf(server.requests[0] as Record<string, unknown>);
      expect(first).toContain("Base prompt.");
      expect(first).toContain(root);
      expect(first).toContain("App rule via the CLAUDE.md fallback.");
      expect(first).not.toContain("Claude-only text");
      expect(first).not.toContain("API rule");
      expect(first.indexOf("Base prompt.")).toBeLessThan(first.indexOf(root));

      const second = systemOf(server.requests[1] as Record<string, unknown>);
      expect(second).toContain("API rule: never break the wire format.");
      // Appended: the first request's prompt is the second's prefix (provider caches stay warm).
      expect(second.startsWith(first)).toBe(true);

      const recorded = instructionEntries(dir);
      expect(recorded).toEqual([
        [
          { path: "AGENTS.md", sha256: sha(root), bytes: root.length, loadedBy: "start" },
          {
            path: "app/CLAUDE.md",
            sha256: sha("App rule via the CLAUDE.md fallback."),
            bytes: 36,
            loadedBy: "start",
          },
        ],
        [
          {
            path: "pkg/api/AGENTS.md",
            sha256: sha("API rule: never break the wire format."),
            bytes: 38,
            loadedBy: "read_file pkg/api/notes.txt",
          },
        ],
      ]);
    } finally {
      await server.close();
    }
  });

  it("instructions: { enabled: false } sends no file and records none, even after a tool touches a nested folder", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { name: "read_file", args: { path: "pkg/api/notes.txt" }, id: "call_1" } },
      { text: "done" },
    ]);
    try {
      const dir = project({
        "AGENTS.md": "Root rule: write tests first.",
        "pkg/api/AGENTS.md": "API rule: never break the wire format.",
        "pkg/api/notes.txt": "notes",
        "reader.ts": READ_TOOL,
      });
      writeFileSync(
        join(dir, "rein.config.ts"),
        config(server.baseUrl).replace(
          'systemPrompt: "Base prompt.",',
          'systemPrompt: "Base prompt.", instructions: { enabled: false },',
        ),
      );
      const result = await rein(["run", "read the notes"], dir);
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      expect(server.requests).toHaveLength(2);
      for (const request of server.requests) {
        const system = systemOf(request as Record<string, unknown>);
        expect(system).toContain("Base prompt.");
        expect(system).not.toContain("Root rule");
        expect(system).not.toContain("API rule");
      }
      expect(instructionEntries(dir)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("with @rein/tools-fs: a resumed session loads the files it recorded from the start, records only changes", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { name: "read", args: { path: "pkg/notes.txt" }, id: "call_1" } },
      { text: "first" },
      { text: "second" },
      { text: "third" },
    ]);
    try {
      const dir = project({
        "AGENTS.md": "Root rule.",
        "pkg/AGENTS.md": "Package rule.",
        "pkg/notes.txt": "notes",
      });
      // @rein/tools-fs's own read tool, whose inspect declares its path.
      writeFileSync(
        join(dir, "rein.config.ts"),
        config(server.baseUrl).replace('"./reader.ts"', JSON.stringify(toolsFs)),
      );
      expect((await rein(["run", "read"], dir)).code).toBe(0);
      expect(instructionEntries(dir).map((files) => files.map((f) => f.path))).toEqual([
        ["AGENTS.md"],
        ["pkg/AGENTS.md"],
      ]);
      expect((await rein(["run", "--continue", "again"], dir)).code).toBe(0);
      // The package's rules are in the resumed session's first request, with no new record.
      expect(systemOf(server.requests[2] as Record<string, unknown>)).toContain("Package rule.");
      expect(instructionEntries(dir)).toHaveLength(2);
      writeFileSync(join(dir, "pkg/AGENTS.md"), "Package rule, edited.");
      expect((await rein(["run", "--continue", "once more"], dir)).code).toBe(0);
      expect(systemOf(server.requests[3] as Record<string, unknown>)).toContain("Package rule, edited.");
      const last = instructionEntries(dir).at(-1);
      expect(last).toEqual([
        {
          path: "pkg/AGENTS.md",
          sha256: sha("Package rule, edited."),
          bytes: 21,
          loadedBy: "read pkg/notes.txt",
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it("an AGENTS.md that links outside the project is not read, with a warning", async () => {
    const server = await startOpenAICompatibleServer([{ text: "ok" }]);
    try {
      const outside = join(tmpdir(), `rein-outside-${process.pid}-${Date.now()}.md`);
      writeFileSync(outside, "SECRET outside text");
      const dir = project({ "reader.ts": READ_TOOL });
      writeFileSync(join(dir, "rein.config.ts"), config(server.baseUrl));
      symlinkSync(outside, join(dir, "AGENTS.md"));
      const result = await rein(["run", "hi"], dir);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain("AGENTS.md links outside the project");
      expect(systemOf(server.requests[0] as Record<string, unknown>)).not.toContain("SECRET");
    } finally {
      await server.close();
    }
  });
});
