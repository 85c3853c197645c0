/**
 * Turns `model` (and `models`) into a pi-ai model the harness can call: a
 * scripted offline model, a custom OpenAI-compatible endpoint, or a model from
 * pi-ai's registry. Invariant: a missing credential is an error that names the
 * environment variable to set, before anything runs.
 */
import { type Api, getEnvApiKey, getModel, getProviders, type Model } from "@mariozechner/pi-ai";
import {
  type CustomModelConfig,
  createScriptedModel,
  type ReinConfig,
  type ScriptedModel,
  type ScriptStep,
} from "@rein/sdk";
import { modelError } from "../errors.js";
import { keyVariable } from "./credential-variables.js";

export interface ResolvedModel {
  model: Model<Api>;
  /** Stream options the model needs (API key, headers). */
  requestOptions: Record<string, unknown>;
  scripted?: ScriptedModel;
  /** How it was chosen, for `doctor`. */
  description: string;
  /** The base URL requests go to (none for a scripted model), named in model errors. */
  endpoint?: string;
}

/**
 * Provider clients (the OpenAI and Anthropic SDKs) retry on their own, silently,
 * with their own backoff; the harness retries too, announced by `retry` events.
 * One mechanism: the clients' retries are turned off and the harness's bounded,
 * visible retry is the only one.
 */
const CLIENT_RETRIES_OFF = { maxRetries: 0 } as const;

export { keyVariable };

function customModel(entry: CustomModelConfig): Model<Api> {
  return {
    id: entry.id,
    name: entry.name ?? entry.id,
    api: (entry.api ?? "openai-completions") as Api,
    provider: entry.provider ?? "custom",
    baseUrl: entry.baseUrl,
    reasoning: entry.reasoning ?? false,
    input: entry.input ?? ["text"],
    // Prices per million tokens: pi-ai computes `usage.cost` from them, so budgets see the spend.
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...entry.cost },
    contextWindow: entry.contextWindow ?? 128_000,
    maxTokens: entry.maxTokens ?? 4_096,
    ...(entry.headers ? { headers: entry.headers } : {}),
  } as Model<Api>;
}

export function resolveModel(
  config: ReinConfig,
  options: { script?: ScriptStep[] | undefined } = {},
): ResolvedModel {
  const script = options.script ?? (typeof config.model === "object" ? config.model.script : undefined);
  if (script) {
    const scripted = createScriptedModel(script);
    return {
      model: scripted.model as Model<Api>,
      requestOptions: {},
      scripted,
      description: `scripted (${script.length} replies)`,
    };
  }
  const name = config.model;
  if (typeof name !== "string") {
    throw modelError(
      "no model configured",
      'set `model: "provider/id"` (see `rein models`), `model: { script: [...] }`, or pass --script <file.json>',
    );
  }
  const custom = (config.models ?? []).find(
    (entry) => name === entry.id || name === `${entry.provider ?? "custom"}/${entry.id}`,
  );
  if (custom) {
    const requestOptions: Record<string, unknown> = { ...CLIENT_RETRIES_OFF };
    if (custom.apiKeyEnv) {
      const key = process.env[custom.apiKeyEnv];
      if (!key) throw modelError(`no API key for model "${name}"`, `set ${custom.apiKeyEnv}`);
      requestOptions.apiKey = key;
    } else {
      // OpenAI-compatible clients insist on some key; local servers ignore it.
      requestOptions.apiKey = "rein-no-key";
    }
    if (custom.temperature !== undefined) requestOptions.temperature = custom.temperature;
    return {
      model: customModel(custom),
      requestOptions,
      description: `custom endpoint ${custom.baseUrl}`,
      endpoint: custom.baseUrl,
    };
  }
  const slash = name.indexOf("/");
  if (slash <= 0) {
    throw modelError(
      `model "${name}" is not "provider/id" and no custom model has that id`,
      "run `rein models` to list models",
    );
  }
  const provider = name.slice(0, slash);
  const id = name.slice(slash + 1);
  if (!(getProviders() as string[]).includes(provider)) {
    throw modelError(
      `unknown provider "${provider}" in model "${name}"`,
      `known providers: ${getProviders().join(", ")}`,
    );
  }
  const model = getModel(provider as never, id as never) as Model<Api> | undefined;
  if (!model) throw modelError(`unknown model "${name}"`, `run \`rein models --provider ${provider}\``);
  const apiKey = getEnvApiKey(provider);
  if (!apiKey) throw modelError(`no API key for provider "${provider}"`, `set ${keyVariable(provider)}`);
  return {
    model,
    requestOptions: { apiKey, ...CLIENT_RETRIES_OFF },
    description: `${provider}/${id}`,
    ...(model.baseUrl ? { endpoint: model.baseUrl } : {}),
  };
}
