/**
 * "Did you mean" for a model id nobody knows: the closest ids of pi-ai's catalogue
 * and of the config's custom models. A `provider/id` is compared whole (a typo in
 * either part is found); a bare id is compared with the catalogue's ids, so
 * `claude-sonnet-4-5` suggests `anthropic/claude-sonnet-4-5`. Among equally close
 * ids (one id is served by many providers), custom models come first, then
 * providers with credentials set, then the model makers' own APIs. Computed only on
 * the error path: it loads the whole catalogue, which a run never does.
 */
import { builtinProviders } from "@earendil-works/pi-ai/providers/all";
import { allowedEdits, editDistance } from "@rein/sdk";
import { modelCollection } from "./model-catalog.js";

interface Known {
  /** How it is written in a config: `provider/id`, or a custom model's id. */
  name: string;
  id: string;
  /** Lower is offered first among equally close ids. */
  rank: number;
}

/** The model makers' own APIs, offered before resellers and gateways serving the same id. */
const MAKERS = ["anthropic", "openai", "google", "xai", "mistral", "deepseek"];

async function catalogue(customIds: readonly string[]): Promise<Known[]> {
  const known: Known[] = customIds.map((id) => ({ name: id, id, rank: 0 }));
  const providers = builtinProviders();
  const models = modelCollection(...providers);
  for (const provider of providers) {
    const maker = MAKERS.indexOf(provider.id);
    const credentials = (await models.getAuth(provider.id).catch(() => undefined)) !== undefined;
    const rank = 1 + (credentials ? 0 : 100) + (maker === -1 ? MAKERS.length : maker);
    for (const model of models.getModels(provider.id)) {
      known.push({ name: `${provider.id}/${model.id}`, id: model.id, rank });
    }
  }
  return known;
}

/** Up to `limit` model names close to `name`, closest first. */
export async function modelSuggestions(
  name: string,
  customIds: readonly string[] = [],
  limit = 3,
): Promise<string[]> {
  const whole = name.indexOf("/") > 0;
  const maxEdits = allowedEdits(name);
  const scored: { name: string; distance: number; rank: number }[] = [];
  for (const known of await catalogue(customIds)) {
    const against = whole ? known.name : known.id;
    if (Math.abs(against.length - name.length) > maxEdits) continue;
    const distance = editDistance(name, against);
    if (distance <= maxEdits) scored.push({ name: known.name, distance, rank: known.rank });
  }
  // Stable: equal distance and rank keep the catalogue's order.
  scored.sort((a, b) => a.distance - b.distance || a.rank - b.rank);
  return [...new Set(scored.map((s) => s.name))].filter((n) => n !== name).slice(0, limit);
}

/** `; did you mean "a", "b" or "c"?`, or nothing. */
export async function didYouMeanModel(name: string, customIds: readonly string[] = []): Promise<string> {
  const names = (await modelSuggestions(name, customIds)).map((n) => `"${n}"`);
  if (names.length === 0) return "";
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  return `; did you mean ${listed}?`;
}
