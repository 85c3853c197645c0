/**
 * `rein hook install <agent>` through the built binary: it merges Rein's
 * entries into the agent's settings (every other key and hook kept), writes
 * them once however often it runs, `--uninstall` removes Rein's only, a
 * Codex config.toml keeps its comments and layout byte for byte, and a
 * settings file that does not parse is refused with its path, not rewritten.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const CONFIG = `export default { model: { script: [] }, plugins: [] };\n`;
const OTHER_HOOK = { matcher: "Write", hooks: [{ type: "command", command: "./lint.sh" }] };

describe("rein hook install claude-code", () => {
  it("adds Rein's hooks beside the user's, keeps other keys, is idempotent, and --uninstall removes only Rein's", async () => {
    const settings = {
      model: "opus",
      permissions: { allow: ["Bash(npm test)"] },
      hooks: { PreToolUse: [OTHER_HOOK] },
    };
    const dir = project({ "rein.config.ts": CONFIG, ".claude/settings.json": JSON.stringify(settings) });
    const file = join(dir, ".claude", "settings.json");
    for (let i = 0; i < 2; i++) {
      const installed = await rein(["hook", "install", "claude-code"], dir);
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr).toContain("1 other hook entry kept");
    }
    const after = JSON.parse(readFileSync(file, "utf8"));
    expect(after.model).toBe("opus");
    expect(after.permissions).toEqual(settings.permissions);
    expect(after.hooks.PreToolUse).toHaveLength(2);
    expect(after.hooks.PreToolUse[0]).toEqual(OTHER_HOOK);
    const ours = after.hooks.PreToolUse[1].hooks[0];
    expect(ours).toMatchObject({ type: "command", timeout: 30, onFailure: "block" });
    // Pinned to the project: a cd out of it does not take its rules off (hook/pinned-project.ts).
    expect(ours.command).toMatch(/--liftoff-only .*bin\/rein-hook\.js hook claude-code --project \S+$/);
    expect(ours.command.endsWith(` --project ${dir}`)).toBe(true);
    expect(Object.keys(after.hooks).sort()).toEqual(
      ["PermissionRequest", "PostToolUse", "PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"].sort(),
    );
    const removed = await rein(["hook", "install", "claude-code", "--uninstall"], dir);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain("removed 6 Rein hook entries");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(settings);
  });

  it("refuses a settings file that is not JSON, naming it, and leaves it as it was", async () => {
    const dir = project({ "rein.config.ts": CONFIG, ".claude/settings.json": "{ not json" });
    const installed = await rein(["hook", "install", "claude-code"], dir);
    expect(installed.code).not.toBe(0);
    expect(installed.stderr).toContain(join(dir, ".claude", "settings.json"));
    expect(readFileSync(join(dir, ".claude", "settings.json"), "utf8")).toBe("{ not json");
  });

  it("--user writes the user's settings (CLAUDE_CONFIG_DIR), not the project's", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const home = project({});
    const installed = await rein(["hook", "install", "claude-code", "--user"], dir, {
      env: { CLAUDE_CONFIG_DIR: home },
    });
    expect(installed.code, installed.stderr).toBe(0);
    expect(existsSync(join(home, "settings.json"))).toBe(true);
    expect(existsSync(join(dir, ".claude"))).toBe(false);
    // One user's settings serve every project: no pin written, Claude Code's $CLAUDE_PROJECT_DIR pins it.
    const written = JSON.parse(readFileSync(join(home, "settings.json"), "utf8"));
    expect(written.hooks.PreToolUse[0].hooks[0].command).not.toContain("--project");
  });
});

describe("rein hook install codex", () => {
  const ORIGINAL = `# my codex settings
model = "gpt-5" # the default

[[hooks.PreToolUse]]
matcher = "apply_patch"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./check-patch.sh"
`;

  it("appends Rein's block, keeps the user's text byte for byte, and --uninstall restores it", async () => {
    const dir = project({ "rein.config.ts": CONFIG, ".codex/config.toml": ORIGINAL });
    const file = join(dir, ".codex", "config.toml");
    for (let i = 0; i < 2; i++) {
      const installed = await rein(["hook", "install", "codex"], dir);
      expect(installed.code, installed.stderr).toBe(0);
    }
    const text = readFileSync(file, "utf8");
    expect(text.startsWith(ORIGINAL)).toBe(true);
    expect(text.match(/# >>> rein hook install/g)).toHaveLength(1);
    const parsed = parse(text) as {
      model: string;
      hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]>;
    };
    expect(parsed.model).toBe("gpt-5");
    expect(parsed.hooks.PreToolUse?.[0]?.hooks[0]?.command).toBe("./check-patch.sh");
    expect(parsed.hooks.PreToolUse?.[1]?.hooks[0]?.command).toMatch(
      /bin\/rein-hook\.js hook codex --project \S+$/,
    );
    expect(parsed.hooks.Stop?.[0]?.hooks[0]).toMatchObject({ type: "command", timeout: 30 });
    const removed = await rein(["hook", "install", "codex", "--uninstall"], dir);
    expect(removed.code, removed.stderr).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(ORIGINAL);
  });

  it("refuses a config.toml that does not parse", async () => {
    const dir = project({ "rein.config.ts": CONFIG, ".codex/config.toml": "model = = 1\n" });
    const installed = await rein(["hook", "install", "codex"], dir);
    expect(installed.code).not.toBe(0);
    expect(installed.stderr).toContain("not valid TOML");
    expect(readFileSync(join(dir, ".codex", "config.toml"), "utf8")).toBe("model = = 1\n");
  });
});

describe("rein hook install gemini", () => {
  it("writes Gemini CLI's event names with millisecond timeouts", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const installed = await rein(["hook", "install", "gemini"], dir);
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(dir, ".gemini", "settings.json"), "utf8"));
    expect(Object.keys(settings.hooks).sort()).toEqual(
      ["AfterAgent", "AfterTool", "BeforeAgent", "BeforeTool", "SessionStart"].sort(),
    );
    expect(settings.hooks.BeforeTool[0].hooks[0]).toMatchObject({ type: "command", timeout: 30_000 });
  });
});
