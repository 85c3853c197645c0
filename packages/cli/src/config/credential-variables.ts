/**
 * Which environment variables give a provider its credentials, asked of pi-ai itself
 * so a hint never names a variable pi-ai does not read.
 *
 * pi-ai exports no list of names, only the resolution: a provider's auth reads the
 * environment through the collection's `AuthContext`. So the provider is asked under a
 * stand-in context that records every variable read: with nothing set it reads the
 * alternatives it tries, in order; trying each (with any variable it reads next) tells a
 * single variable from a pair such as `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY`. The
 * stand-in says no file exists, so ambient files (an AWS profile, gcloud's ADC) never
 * count as a way. Invariant: the real environment is never read or changed here.
 */
import { type AuthContext, createModels, type Provider } from "@earendil-works/pi-ai";
import { loadBuiltinProvider } from "@rein/harness";

/** How many times a way may grow by the variables its last probe read. */
const MAX_PARTNER_ROUNDS = 4;

interface Probe {
  found: boolean;
  reads: string[];
}

async function probe(provider: Provider, set: Record<string, string>): Promise<Probe> {
  const reads: string[] = [];
  const authContext: AuthContext = {
    env: async (name) => {
      if (!reads.includes(name)) reads.push(name);
      return set[name];
    },
    fileExists: async () => false,
  };
  const models = createModels({ authContext });
  models.setProvider(provider);
  let found = false;
  try {
    found = (await models.getAuth(provider.id)) !== undefined;
  } catch {
    found = false;
  }
  return { found, reads };
}

/**
 * The ways to give `provider` a credential, each a set of variables that together
 * suffice (`[["ANTHROPIC_OAUTH_TOKEN"], ["ANTHROPIC_API_KEY"]]`,
 * `[["AWS_PROFILE"], ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"], ...]`), in
 * pi-ai's order of precedence; empty when pi-ai reads no variable for it.
 */
export async function credentialVariables(provider: Provider): Promise<string[][]> {
  const first = (await probe(provider, {})).reads;
  const ways: string[][] = [];
  for (const name of first) {
    // Variables read only once `name` is set are its partners (AWS_SECRET_ACCESS_KEY after
    // AWS_ACCESS_KEY_ID; a gateway's account and gateway ids after its key), found a few at a time.
    const way = [name];
    for (let round = 0; round < MAX_PARTNER_ROUNDS; round++) {
      const result = await probe(provider, Object.fromEntries(way.map((n) => [n, "set"])));
      if (result.found) {
        ways.push(way);
        break;
      }
      const partners = result.reads.filter((read) => !first.includes(read) && !way.includes(read));
      if (partners.length === 0) break;
      way.push(...partners);
    }
  }
  if (ways.length === 0 && first.length > 1) {
    // Read from the start but needed together (a gateway's key, account id and gateway id):
    // all of them, less each one that turns out not to be needed.
    const way = [...first];
    const found = async (names: string[]) =>
      (await probe(provider, Object.fromEntries(names.map((n) => [n, "set"])))).found;
    if (await found(way)) {
      for (const name of first) {
        const without = way.filter((n) => n !== name);
        if (without.length > 0 && (await found(without))) way.splice(way.indexOf(name), 1);
      }
      ways.push(way);
    }
  }
  return ways;
}

/**
 * What to set, for a hint: `ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY`. `provider` is a
 * pi-ai provider or the id of a built-in one.
 */
export async function keyVariable(provider: Provider | string): Promise<string> {
  const id = typeof provider === "string" ? provider : provider.id;
  const resolved = typeof provider === "string" ? await loadBuiltinProvider(provider) : provider;
  const ways = resolved ? await credentialVariables(resolved) : [];
  if (ways.length === 0)
    return `the credentials pi-ai expects for "${id}" (it reads no environment variable for it)`;
  const shown = ways.map((way) => way.join(" + "));
  return shown.length === 1 ? (shown[0] as string) : `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`;
}
