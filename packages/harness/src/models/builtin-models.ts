/**
 * The model collection a harness streams through when its caller gives none: pi-ai's
 * built-in providers, each loaded from its own module (`@earendil-works/pi-ai/providers/<id>`)
 * on the first request to one of its models, so a run pays only for the provider it talks
 * to. Invariant: a provider id is only ever loaded from pi-ai's own provider modules, and
 * only a factory whose provider has exactly that id is used.
 */
import {
  type AssistantMessageEventStream,
  createModels,
  lazyStream,
  type Models,
  type MutableModels,
  type Provider,
} from "@earendil-works/pi-ai";
import type { StreamFunction } from "../loop/loop-types.js";
import { reinIdentity, withReinIdentity } from "./rein-identity.js";

/** Provider ids are pi-ai module names: lower-case words joined by dashes. */
const PROVIDER_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** The built-in provider `id`, or undefined when pi-ai has none by that id. */
export async function loadBuiltinProvider(id: string): Promise<Provider | undefined> {
  if (!PROVIDER_ID.test(id)) return undefined;
  let module: Record<string, unknown>;
  try {
    module = (await import(`@earendil-works/pi-ai/providers/${id}`)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  for (const [name, value] of Object.entries(module)) {
    if (!name.endsWith("Provider") || typeof value !== "function") continue;
    const provider = (value as () => Provider)();
    if (provider?.id === id) return provider;
  }
  return undefined;
}

/** A collection that gains each built-in provider the first time one of its models is used. */
export class BuiltinModels {
  readonly models: MutableModels = createModels({ identity: reinIdentity() });
  private readonly loading = new Map<string, Promise<void>>();

  /** Makes sure the provider of `providerId` is in the collection (when pi-ai has it). */
  ensure(providerId: string): Promise<void> {
    if (this.models.getProvider(providerId)) return Promise.resolve();
    let pending = this.loading.get(providerId);
    if (!pending) {
      pending = loadBuiltinProvider(providerId).then((provider) => {
        if (provider && !this.models.getProvider(providerId)) this.models.setProvider(provider);
      });
      this.loading.set(providerId, pending);
    }
    return pending;
  }

  /** `streamSimple` over the collection, loading the model's provider first. */
  readonly stream: StreamFunction = (model, context, options): AssistantMessageEventStream =>
    lazyStream(
      model,
      async () => {
        await this.ensure(model.provider);
        return this.models.streamSimple(model, context, options);
      },
      undefined,
      options?.signal,
    );
}

/**
 * The stream function of a harness: through `models` when given, else the built-in providers.
 * A request to an API that needs more of Rein's identity gets it (`withReinIdentity`).
 */
export function streamThrough(models: Models | undefined): StreamFunction {
  if (models) {
    return (model, context, options) =>
      models.streamSimple(model, context, withReinIdentity(model.api, options));
  }
  // Made on the first request: a harness that never calls a model (inspection, replay) pays nothing.
  let builtin: BuiltinModels | undefined;
  return (model, context, options) => {
    builtin ??= new BuiltinModels();
    return builtin.stream(model, context, withReinIdentity(model.api, options));
  };
}
