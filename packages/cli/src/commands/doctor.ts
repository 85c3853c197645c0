/** `rein doctor`: checks config, plugins, options, model and credentials, and says what is wrong. Exit 2 when anything is. */
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { maskConnectionStrings } from "@rein/harness";
import { inspectionAgent } from "../agent/build-agent.js";
import { sessionBackend } from "../agent/session-backend.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { cacheDir } from "../config/module-loader.js";
import { resolveModel } from "../config/resolve-model.js";
import type { ResolvedEntry } from "../config/resolve-plugins.js";
import { nodeCheck } from "../doctor/doctor-node.js";
import { sandboxDoctorCheck } from "../doctor/doctor-sandbox.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { describeServer, mcpServers } from "../mcp/mcp-status.js";
import { terminal } from "../ui/terminal.js";

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  hint?: string;
  /** A problem that does not fail the doctor (printed with `!`). */
  warn?: boolean;
}

const failure = (name: string, error: unknown): Check => ({
  name,
  ok: false,
  detail: (error as Error).message,
  ...((error as { hint?: string }).hint ? { hint: (error as { hint: string }).hint } : {}),
});

export async function doctorCommand(globals: GlobalOptions): Promise<number> {
  const node = nodeCheck();
  const checks: Check[] = [
    {
      name: "node",
      ok: node.ok,
      detail: node.detail,
      ...(node.warning ? { hint: node.warning, warn: node.ok } : {}),
    },
  ];
  let loaded: LoadedConfig | undefined;
  let plugins: ResolvedEntry[] | undefined;
  try {
    loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
    checks.push({ name: "config", ok: true, detail: loaded.file ?? "none found (defaults apply)" });
    const others = loaded.layers.filter((layer) => layer.name !== "project" && layer.file);
    if (others.length > 0) {
      const detail = others.map((layer) => `${layer.name} ${layer.file}`).join(", ");
      checks.push({ name: "layers", ok: true, detail: `${detail} (rein config shows the merge)` });
    }
  } catch (error) {
    checks.push(failure("config", error));
  }
  if (loaded) {
    try {
      const model = await resolveModel(loaded.config);
      checks.push({ name: "model", ok: true, detail: model.description });
      model.scripted?.dispose();
    } catch (error) {
      checks.push(failure("model", error));
    }
    try {
      const agent = await inspectionAgent(globals);
      const names = agent.host.plugins.map((p) => p.name);
      plugins = agent.plugins;
      checks.push({ name: "plugins", ok: true, detail: names.length ? names.join(", ") : "none" });
      checks.push({
        name: "tools",
        ok: true,
        detail: `${agent.harness.tools.length} registered, ${agent.harness.activeToolNames.length} active`,
      });
      for (const server of mcpServers(agent.session.entries())) {
        const { ok, line, reason } = describeServer(server);
        checks.push({ name: "mcp", ok, detail: line, ...(reason ? { hint: reason } : {}) });
      }
      await agent.dispose();
    } catch (error) {
      checks.push(failure("plugins", error));
    }
    // The store the config selects, used for real: its JSONL folder, or its database.
    try {
      checks.push({ name: "sessions", ok: true, detail: await (await sessionBackend(loaded)).probe() });
    } catch (error) {
      checks.push(failure("sessions", error));
    }
  }
  checks.push(writable("cache", cacheDir()));
  checks.push(await sandboxDoctorCheck(plugins));

  const term = terminal();
  for (const check of checks) {
    const mark = !check.ok ? term.co.red("✗") : check.warn ? term.co.yellow("!") : term.co.green("✓");
    term.out.write(maskConnectionStrings(`${mark} ${check.name.padEnd(8)} ${check.detail}\n`));
    if (check.hint) term.out.write(maskConnectionStrings(`  ${term.co.dim(check.hint)}\n`));
  }
  return checks.every((check) => check.ok) ? ExitCode.ok : ExitCode.usage;
}

function writable(name: string, dir: string): Check {
  try {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return { name, ok: true, detail: dir };
  } catch (error) {
    return failure(name, error);
  }
}
