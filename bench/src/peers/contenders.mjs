/**
 * How each agent of the peers benchmark is started against the scripted model
 * server, fully offline (engineering-notes.md, "Facts for the third wave"):
 *
 * - Claude Code: its native binary, `-p PROMPT --permission-mode bypassPermissions`,
 *   Anthropic Messages at `ANTHROPIC_BASE_URL`, telemetry, updater and nonessential
 *   traffic off, a HOME of its own (so the user's settings stay out).
 * - Codex: its native binary, `exec --skip-git-repo-check PROMPT`, a `CODEX_HOME`
 *   with a custom provider (`wire_api = "responses"`, no retries), no updates, no
 *   analytics, no plugins; `sandbox_mode` per contender.
 * - pi: its bundle on the same Node as Rein, `-p --provider bench --model bench`,
 *   chat completions from `models.json`, offline, no version check, no telemetry.
 * - Rein: `packages/cli/dist/bin.js run PROMPT` on a trusted project with the
 *   default stack (file tools, sandboxed shell, policy with shell rules,
 *   permissions in `sandboxed` mode), Anthropic Messages through a custom model;
 *   "unsandboxed" swaps the shell's sandbox off (and permissions to `default`,
 *   with a policy rule allowing the bench's `echo`).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const REIN_BIN = path.join(repo, "packages/cli/dist/bin.js");
export const PROMPT = "Run the echo commands the task needs, one call at a time, then say done.";

/** The Node versions Rein supports, where this machine has them (npx caches), beside the bench's own. */
export function nodes() {
  const found = [{ label: `Node ${process.versions.node.split(".")[0]}`, exec: process.execPath }];
  const candidates = (process.env.REIN_BENCH_NODES ?? "")
    .split(path.delimiter)
    .filter(Boolean)
    .concat(
      [
        "~/.npm/_npx/992a19d7d9bf36d4/node_modules/.bin/node", // node@22.19
        "~/.npm/_npx/bac97da9607b7ef2/node_modules/.bin/node", // node@26
      ].map((file) => file.replace("~", process.env.HOME ?? "")),
    );
  for (const exec of candidates) {
    if (!fs.existsSync(exec)) continue;
    const version = execFileSync(exec, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
    const label = `Node ${version.split(".")[0]}`;
    if (!found.some((n) => n.label === label)) found.push({ label, exec, version });
  }
  return found;
}

const REIN_CONFIG = (sandboxed) => `import { defineConfig } from "@rein/sdk";

export default defineConfig({
  model: "bench",
  models: [{ id: "bench", baseUrl: process.env.BENCH_MODEL_URL ?? "http://127.0.0.1:9", api: "anthropic-messages", apiKeyEnv: "BENCH_API_KEY" }],
  plugins: [
    "@rein/tools-fs",
    ["@rein/tools-shell", { sandbox: ${sandboxed ? '{ mode: "workspace-write", network: { allowedDomains: [] } }' : '{ mode: "off" }'} }],
    [
      "@rein/plugin-policy",
      {
        rules: [
          { id: "secrets", rule: "read(**/.env*)", decision: "deny", reason: "secrets stay out of context" },
          { id: "push", rule: "bash(git push *)", decision: "ask", reason: "pushing publishes work" },
          { id: "wipe", rule: "bash(rm -rf *)", decision: "deny", reason: "no recursive deletes" },${
            sandboxed
              ? ""
              : '\n          { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "the bench\'s command" },'
          }
        ],
      },
    ],
    ["@rein/plugin-permissions", { mode: "${sandboxed ? "sandboxed" : "default"}" }],
  ],
  session: { dir: ".rein/sessions" },
});
`;

const WORKSPACE_PACKAGES = {
  "@rein/sdk": "packages/sdk",
  "@rein/harness": "packages/harness",
  "@rein/tools-fs": "packages/plugins/tools-fs",
  "@rein/tools-shell": "packages/plugins/tools-shell",
  "@rein/plugin-policy": "packages/plugins/plugin-policy",
  "@rein/plugin-permissions": "packages/plugins/plugin-permissions",
};

/**
 * A Rein project as a user has it after `npm install` and `rein trust`, its
 * packages linked from the checkout at `root` (this repo unless told).
 */
export function reinProject(dir, sandboxed, env, root = repo) {
  fs.mkdirSync(path.join(dir, "node_modules/@rein"), { recursive: true });
  for (const [name, where] of Object.entries(WORKSPACE_PACKAGES))
    fs.symlinkSync(path.join(root, where), path.join(dir, "node_modules", name), "dir");
  fs.writeFileSync(
    path.join(dir, "package.json"),
    '{ "name": "bench-project", "private": true, "type": "module" }\n',
  );
  fs.writeFileSync(path.join(dir, "rein.config.ts"), REIN_CONFIG(sandboxed));
  execFileSync(process.execPath, [path.join(root, "packages/cli/dist/bin.js"), "trust", "--yes"], {
    cwd: dir,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
}

/**
 * The contenders for one bench run: `{ id, label, kind, command, args, env, cwd }`
 * each, `kind` = "peer" | "rein"; `sandboxed` says whether its shell calls run
 * in an OS sandbox.
 */
export function contenders({ peers, origin, dir, codexHome }) {
  const base = { ...process.env, NO_COLOR: "1" };
  const out = [];
  for (const peer of peers.filter((p) => !p.skipped)) {
    const cwd = path.join(dir, `work-${peer.id}`);
    fs.mkdirSync(cwd, { recursive: true });
    if (peer.id === "claude") {
      const home = path.join(dir, "home-claude");
      fs.mkdirSync(home, { recursive: true });
      out.push({
        id: "claude",
        label: `Claude Code ${peer.version}`,
        kind: "peer",
        runtime: peer.runtime,
        sandboxed: false,
        command: peer.binary,
        args: ["-p", PROMPT, "--permission-mode", "bypassPermissions"],
        cwd,
        env: {
          ...base,
          HOME: home,
          ANTHROPIC_BASE_URL: origin,
          ANTHROPIC_API_KEY: "bench",
          ANTHROPIC_MODEL: "claude-opus-4-5",
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_ERROR_REPORTING: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          IS_SANDBOX: "1",
        },
      });
    }
    if (peer.id === "codex") {
      for (const sandboxed of [false, true]) {
        const home = path.join(codexHome, sandboxed ? "sandboxed" : "full-access");
        fs.mkdirSync(home, { recursive: true });
        fs.writeFileSync(
          path.join(home, "config.toml"),
          [
            'model = "bench"',
            'model_provider = "bench"',
            'approval_policy = "never"',
            `sandbox_mode = "${sandboxed ? "workspace-write" : "danger-full-access"}"`,
            "check_for_update_on_startup = false",
            "[analytics]",
            "enabled = false",
            "[features]",
            "plugins = false",
            "[model_providers.bench]",
            'name = "bench"',
            `base_url = "${origin}/v1"`,
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
          ].join("\n"),
        );
        out.push({
          id: sandboxed ? "codex-sandboxed" : "codex",
          label: `Codex ${peer.version}${sandboxed ? ", sandboxed" : ""}`,
          kind: "peer",
          runtime: peer.runtime,
          sandboxed,
          command: peer.binary,
          args: ["exec", "--skip-git-repo-check", PROMPT],
          cwd,
          env: { ...base, CODEX_HOME: home },
        });
      }
    }
    if (peer.id === "pi") {
      const agentDir = path.join(dir, "pi-agent");
      fs.mkdirSync(agentDir, { recursive: true });
      fs.writeFileSync(
        path.join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            bench: {
              baseUrl: `${origin}/v1`,
              api: "openai-completions",
              apiKey: "bench",
              models: [{ id: "bench" }],
            },
          },
        }),
      );
      out.push({
        id: "pi",
        label: `pi ${peer.version}`,
        kind: "peer",
        runtime: `Node ${process.versions.node.split(".")[0]}`,
        sandboxed: false,
        command: process.execPath,
        args: [peer.binary, "-p", "--provider", "bench", "--model", "bench", PROMPT],
        cwd,
        env: {
          ...base,
          PI_CODING_AGENT_DIR: agentDir,
          PI_OFFLINE: "1",
          PI_SKIP_VERSION_CHECK: "1",
          PI_TELEMETRY: "0",
        },
      });
    }
  }
  const reinEnv = {
    ...base,
    BENCH_MODEL_URL: origin,
    BENCH_API_KEY: "bench",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
    REIN_CACHE_DIR: path.join(dir, "rein-cache"),
  };
  const cliVersion = JSON.parse(
    fs.readFileSync(path.join(repo, "packages/cli/package.json"), "utf8"),
  ).version;
  for (const sandboxed of [true, false]) {
    const cwd = path.join(dir, sandboxed ? "rein-sandboxed" : "rein-unsandboxed");
    reinProject(cwd, sandboxed, reinEnv);
    for (const node of nodes()) {
      // The RSS target holds on every supported Node; the time rows need only the bench's own.
      if (!sandboxed && node.exec !== process.execPath) continue;
      out.push({
        id: `rein${sandboxed ? "" : "-unsandboxed"}${node.exec === process.execPath ? "" : `-node${node.label.slice(5)}`}`,
        label: `rein ${cliVersion} (${node.label}${sandboxed ? "" : ", unsandboxed"})`,
        kind: "rein",
        runtime: node.label,
        main: node.exec === process.execPath,
        sandboxed,
        command: node.exec,
        args: [REIN_BIN, "run", PROMPT],
        cwd,
        env: reinEnv,
      });
    }
  }
  return out;
}
