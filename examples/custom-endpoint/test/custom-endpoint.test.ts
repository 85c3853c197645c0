import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const reinBin = join(
  dirname(createRequire(import.meta.url).resolve("@rein/cli/package.json")),
  "dist",
  "bin.js",
);

function run(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [reinBin, ...args], {
      cwd: join(here, ".."),
      env: {
        ...process.env,
        NO_COLOR: "1",
        REIN_CACHE_DIR: mkdtempSync(join(tmpdir(), "rein-cache-")),
        // The example's own config, trusted for the test (a person runs `rein trust` once).
        REIN_TRUST_PROJECT: "1",
        ...env,
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.stdin.end();
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the custom-endpoint example", { timeout: 60_000 }, () => {
  it("talks to an OpenAI-compatible server: the model calls the clock tool and answers", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { id: "call_clock", name: "clock", args: { timeZone: "Asia/Tokyo" } } },
      { text: "It is evening in Tokyo." },
    ]);
    try {
      const sessions = mkdtempSync(join(tmpdir(), "rein-endpoint-"));
      const config = join(here, "..", "rein.config.ts");
      const result = await run(["run", "--config", config, "What time is it in Tokyo?"], {
        REIN_ENDPOINT: server.baseUrl,
        HOME: sessions,
      });
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("It is evening in Tokyo.");
      expect(server.requests[0]).toMatchObject({ model: "qwen2.5-coder", stream: true });
      const followUp = server.requests[1]?.messages as { role: string; content?: unknown }[];
      expect(JSON.stringify(followUp.find((m) => m.role === "tool")?.content)).toMatch(/\d{2}:\d{2}/);
    } finally {
      await server.close();
    }
  });
});
