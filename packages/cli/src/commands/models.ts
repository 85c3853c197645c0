/** `rein models`: pi-ai's registry with credential status, plus the config's custom models. */
import { getEnvApiKey, getModels, getProviders } from "@mariozechner/pi-ai";
import { loadConfig } from "../config/load-config.js";
import { keyVariable } from "../config/resolve-model.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../program.js";
import { terminal } from "../ui/terminal.js";

export async function modelsCommand(
  options: { provider?: string; json?: boolean },
  globals: GlobalOptions,
): Promise<number> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const providers = getProviders() as string[];
  if (options.provider && !providers.includes(options.provider)) {
    throw usageError(`unknown provider "${options.provider}"`, `known providers: ${providers.join(", ")}`);
  }
  const rows = (options.provider ? [options.provider] : providers).flatMap((provider) => {
    const hasKey = getEnvApiKey(provider) !== undefined;
    return getModels(provider as never).map((model: { id: string; contextWindow: number }) => ({
      model: `${provider}/${model.id}`,
      contextWindow: model.contextWindow,
      credentials: hasKey ? "set" : `missing (${keyVariable(provider)})`,
      source: "pi-ai",
    }));
  });
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
