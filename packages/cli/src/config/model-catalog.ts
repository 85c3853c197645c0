/**
 * pi-ai's model catalogue as the CLI sees it: the built-in providers (each loaded from
 * its own module, so resolving one model loads one provider), the provider that serves
 * a custom `models[]` entry, and the collection a run streams through. Invariant: every
 * collection is created with Rein's client identity (attribution names Rein, not pi).
 */
import {
  type Api,
  createModels,
  createProvider,
  type Model,
  type MutableModels,
  type Provider,
  type ProviderAuth,
  type ProviderStreams,
} from "@earendil-works/pi-ai";
import { loadBuiltinProvider, reinIdentity } from "@rein/harness";
import type { CUSTOM_MODEL_APIS } from "@rein/sdk";

type CustomModelApi = (typeof CUSTOM_MODEL_APIS)[number];

/** A collection with Rein's identity, holding `providers`. */
export function modelCollection(...providers: Provider[]): MutableModels {
  const models = createModels({ identity: reinIdentity() });
  for (const provider of providers) models.setProvider(provider);
  return models;
}

/** The ids of every built-in provider (loads the whole catalogue: for listings, not runs). */
export async function builtinProviderIds(): Promise<string[]> {
  const { getBuiltinProviders } = await import("@earendil-works/pi-ai/providers/all");
  return [...getBuiltinProviders()].sort();
}

export { loadBuiltinProvider };

/** pi-ai's lazily loaded implementation of `api` (its SDK loads on the first request). */
async function lazyApi(api: CustomModelApi): Promise<ProviderStreams> {
  const module = (await import(`@earendil-works/pi-ai/api/${api}.lazy`)) as Record<string, unknown>;
  for (const [name, value] of Object.entries(module)) {
    if (name.endsWith("Api") && typeof value === "function") return (value as () => ProviderStreams)();
  }
  throw new Error(`pi-ai has no implementation of the "${api}" API`);
}

/** The provider of one custom model: its endpoint, its key (or none), its API. */
export async function customProvider(
  model: Model<Api>,
  apiKey: { variable?: string | undefined; value?: string | undefined },
): Promise<Provider> {
  const auth: ProviderAuth = {
    apiKey: {
      name: apiKey.variable ?? `${model.provider} (no key)`,
      // OpenAI-compatible clients insist on some key; local servers ignore it.
      resolve: async () => ({
        auth: { apiKey: apiKey.value ?? "rein-no-key" },
        ...(apiKey.variable ? { source: apiKey.variable } : {}),
      }),
    },
  };
  return createProvider({
    id: model.provider,
    name: model.provider,
    baseUrl: model.baseUrl,
    auth,
    models: [model],
    api: await lazyApi(model.api as CustomModelApi),
  });
}
