/**
 * Turns `model` (and `models`) into a pi-ai model the harness can call: a
 * scripted offline model, a custom OpenAI-compatible endpoint, or a model from
 * pi-ai's registry. Invariant: a missing credential is an error that names the
 * environment variable to set, before anything runs.
 */
import type { Api, Model, Models } from "@earendil-works/pi-ai";
import {
  type CustomModelConfig,
  createScriptedModel,
  type ReinConfig,
  type ScriptedModel,
  type ScriptStep,
} from "@rein/sdk";
import { modelError } from "../errors.js";
import { clientRetriesOff } from "./client-retries.js";
import { keyVariable } from "./credential-variables.js";
import { builtinProviderIds, customProvider, loadBuiltinProvider, modelCollection } from "./model-catalog.js";
import { didYouMeanModel } from "./model-suggestions.js";

export interface ResolvedModel {
  model: Model<Api>;
  /** The collection that serves `model` (the harness option `models`). */
  models: Models;
  /** Stream options the model needs (API key, headers). */
  requestOptions: Record<string, unknown>;
  scripted?: ScriptedModel;
  /** How it was chosen, for `doctor`. */
  description: string;
  /** The base URL requests go to (none for a scripted model), named in model errors. */
  endpoint?: string;
}

function customModel(entry: CustomModelConfig, base?: Model<Api>): Model<Api> {
  // Over a catalogue model, only what the entry says changes (its endpoint, most often):
  // the catalogue's API, limits, prices and compatibility flags stay.
  const given = <K extends keyof CustomModelConfig>(key: K) => entry[key] !== undefined;
  return {
    ...base,
    id: entry.id,
    name: entry.name ?? base?.name ?? entry.id,
    api: (entry.api ?? base?.api ?? "openai-completions") as Api,
    provider: entry.provider ?? "custom",
    baseUrl: entry.baseUrl,
    reasoning: entry.reasoning ?? base?.reasoning ?? false,
    input: entry.input ?? base?.input ?? ["text"],
    // Prices per million tokens: pi-ai computes `usage.cost` from them, so budgets see the spend.
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...base?.cost, ...entry.cost },
    contextWindow: entry.contextWindow ?? base?.contextWindow ?? 128_000,
    maxTokens: entry.maxTokens ?? base?.maxTokens ?? 4_096,
    ...(given("headers") ? { headers: { ...base?.headers, ...entry.headers } } : {}),
    // The catalogue's own fields, so a model released after this pi-ai can be described.
    ...(given("compat") ? { compat: { ...base?.compat, ...entry.compat } } : {}),
    ...(given("thinkingLevelMap") ? { thinkingLevelMap: entry.thinkingLevelMap } : {}),
  } as Model<Api>;
}

export { keyVariable };

export async function resolveModel(
  config: ReinConfig,
  options: {
    script?: ScriptStep[] | undefined;
    /** Where `model` was written (a layer's file and line), named by an unknown-id error. */
    modelAt?: { file?: string; line?: number; layer?: string };
  } = {},
): Promise<ResolvedModel> {
  const at = options.modelAt ?? {};
  const script = options.script ?? (typeof config.model === "object" ? config.model.script : undefined);
  if (script) {
    const scripted = createScriptedModel(script);
    return {
      model: scripted.model as Model<Api>,
      models: scripted.models,
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
    // An entry whose provider and id name a catalogue model points that model elsewhere
    // (a gateway, a proxy, a recording server) and keeps its provider's credentials.
    const builtin =
      custom.provider && !custom.apiKeyEnv ? await loadBuiltinProvider(custom.provider) : undefined;
    const base = builtin?.getModels().find((model) => model.id === custom.id);
    const model = customModel(custom, base);
    const requestOptions: Record<string, unknown> = { ...clientRetriesOff(model) };
    if (custom.temperature !== undefined) requestOptions.temperature = custom.temperature;
    const description = `${base ? `${custom.provider}/${custom.id} at` : "custom endpoint"} ${custom.baseUrl}`;
    if (builtin && base) {
      const models = modelCollection(builtin);
      const auth = await models.getAuth(model).catch(() => undefined);
      if (!auth)
        throw modelError(`no API key for provider "${builtin.id}"`, `set ${await keyVariable(builtin)}`);
      return { model, models, requestOptions, description, endpoint: custom.baseUrl };
    }
    const key = custom.apiKeyEnv ? process.env[custom.apiKeyEnv] : undefined;
    if (custom.apiKeyEnv && !key)
      throw modelError(`no API key for model "${name}"`, `set ${custom.apiKeyEnv}`);
    return {
      model,
      models: modelCollection(await customProvider(model, { variable: custom.apiKeyEnv, value: key })),
      requestOptions,
      description,
      endpoint: custom.baseUrl,
    };
  }
  const slash = name.indexOf("/");
  // Custom models are written by id (or provider/id): suggested by what the config calls them.
  const customIds = (config.models ?? []).map((entry) => entry.id);
  if (slash <= 0) {
    throw modelError(
      `model "${name}" is not "provider/id" and no custom model has that id${await didYouMeanModel(name, customIds)}`,
      "run `rein models` to list models",
      at,
    );
  }
  const providerId = name.slice(0, slash);
  const id = name.slice(slash + 1);
  const provider = await loadBuiltinProvider(providerId);
  if (!provider) {
    const known = await builtinProviderIds();
    throw modelError(
      `unknown provider "${providerId}" in model "${name}"${await didYouMeanModel(name, customIds)}`,
      `known providers: ${known.join(", ")}`,
      at,
    );
  }
  const models = modelCollection(provider);
  const model = models.getModel(providerId, id);
  if (!model) {
    throw modelError(
      `unknown model "${name}"${await didYouMeanModel(name, customIds)}`,
      `run \`rein models --provider ${providerId}\``,
      at,
    );
  }
  const auth = await models.getAuth(model).catch(() => undefined);
  if (!auth)
    throw modelError(`no API key for provider "${providerId}"`, `set ${await keyVariable(provider)}`);
  return {
    model,
    models,
    requestOptions: { ...clientRetriesOff(model) },
    description: `${providerId}/${id}`,
    ...(model.baseUrl ? { endpoint: model.baseUrl } : {}),
  };
}
