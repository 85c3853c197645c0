/**
 * `rein models`: pi-ai's catalogue (every chat model of every built-in provider) with
 * the credential each needs and whether it is set, plus the config's custom models.
 */
import { builtinProviders } from "@earendil-works/pi-ai/providers/all";
import { loadConfig } from "../config/load-config.js";
import { modelCollection } from "../config/model-catalog.js";
import { keyVariable } from "../config/resolve-model.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { terminal } from "../ui/terminal.js";

interface Row {
  model: string;
  contextWindow: number;
  credentials: string;
  source: string;
}

export async function modelsCommand(
  options: { provider?: string; json?: boolean },
  globals: GlobalOptions,
): Promise<number> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const all = builtinProviders().sort((a, b) => a.id.localeCompare(b.id));
  const ids = all.map((provider) => provider.id);
  if (options.provider && !ids.includes(options.provider)) {
    throw usageError(`unknown provider "${options.provider}"`, `known providers: ${ids.join(", ")}`);
  }
  const providers = options.provider ? all.filter((provider) => provider.id === options.provider) : all;
  const models = modelCollection(...providers);
  const rows: Row[] = [];
  for (const provider of providers) {
    const configured = (await models.getAuth(provider.id).catch(() => undefined)) !== undefined;
    const credentials = configured ? "set" : `missing (${await keyVariable(provider)})`;
    for (const model of models.getModels(provider.id)) {
      rows.push({
        model: `${provider.id}/${model.id}`,
        contextWindow: model.contextWindow,
        credentials,
        source: "pi-ai",
      });
    }
  }
  for (const custom of loaded.config.models ?? []) {
    rows.push({
      model: `${custom.provider ?? "custom"}/${custom.id}`,
      contextWindow: custom.contextWindow ?? 128_000,
      credentials: custom.apiKeyEnv
        ? process.env[custom.apiKeyEnv]
          ? "set"
          : `missing (${custom.apiKeyEnv})`
        : "not needed",
      source: custom.baseUrl,
    });
  }
  const term = terminal();
  if (options.json) {
    for (const row of rows) term.out.write(`${JSON.stringify(row)}\n`);
    return ExitCode.ok;
  }
  for (const row of rows) {
    term.out.write(
      `${row.model.padEnd(48)} ${String(row.contextWindow).padStart(8)}  ${row.credentials}${row.source === "pi-ai" ? "" : `  ${row.source}`}\n`,
    );
  }
  return ExitCode.ok;
}
