/**
 * Which environment variables give a provider its credentials, asked of pi-ai
 * itself so a hint never names a variable pi-ai does not read (it used to say
 * `AMAZON_BEDROCK_API_KEY`, which nothing reads).
 *
 * pi-ai exports no list of names, only the lookups: `findEnvKeys(provider)`
 * (which of the provider's key variables are set) and `getEnvApiKey(provider)`
 * (the credential, including ambient ones such as AWS profiles). Both read
 * `process.env`, so they are asked under a stand-in environment: one where
 * every variable is set gives the key variables; for providers with ambient
 * credentials, one that records each variable read gives the alternatives pi-ai
 * tries, and trying each (with any variable it reads next) tells a single
 * variable from a pair such as `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY`.
 * Invariant: the real `process.env` is put back before returning (the probes are
 * synchronous, so nothing else runs meanwhile).
 */
import { findEnvKeys, getEnvApiKey } from "@mariozechner/pi-ai";

function underEnvironment<T>(env: NodeJS.ProcessEnv, ask: () => T): T {
  const real = process.env;
  process.env = env;
  try {
    return ask();
  } finally {
    process.env = real;
  }
}

/** An environment holding exactly `set`, recording every variable read, in order. */
function recordingEnvironment(set: Record<string, string>) {
  const reads: string[] = [];
  const env = new Proxy(set, {
    get(target, key) {
      if (typeof key !== "string") return undefined;
      if (!reads.includes(key)) reads.push(key);
      return target[key];
    },
  });
  return { env: env as NodeJS.ProcessEnv, reads };
}

/**
 * The ways to give `provider` a credential, each a set of variables that together
 * suffice (`[["ANTHROPIC_OAUTH_TOKEN"], ["ANTHROPIC_API_KEY"]]`,
 * `[["AWS_PROFILE"], ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"], ...]`), in
 * pi-ai's order of precedence; empty when pi-ai reads no variable for it.
 */
export function credentialVariables(provider: string): string[][] {
  const everySet = new Proxy({}, { get: (_t, key) => (typeof key === "string" ? "set" : undefined) });
  const keys = underEnvironment(everySet as NodeJS.ProcessEnv, () => findEnvKeys(provider));
  if (keys && keys.length > 0) return keys.map((key) => [key]);
  const probe = (set: Record<string, string>) => {
    const recording = recordingEnvironment(set);
    const found = underEnvironment(recording.env, () => getEnvApiKey(provider));
    return { found: found !== undefined, reads: recording.reads };
  };
  const first = probe({}).reads;
  const ways: string[][] = [];
  for (const name of first) {
    const alone = probe({ [name]: "set" });
    if (alone.found) {
      ways.push([name]);
      continue;
    }
    // Read only once `name` is set: its partners (AWS_SECRET_ACCESS_KEY after AWS_ACCESS_KEY_ID).
    const partners = alone.reads.filter((read) => !first.includes(read));
    if (partners.length === 0) continue;
    const together = Object.fromEntries([name, ...partners].map((n) => [n, "set"]));
    if (probe(together).found) ways.push([name, ...partners]);
  }
  return ways;
}

/** What to set, for a hint: `ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY`. */
export function keyVariable(provider: string): string {
  const ways = credentialVariables(provider);
  if (ways.length === 0)
    return `the credentials pi-ai expects for "${provider}" (it reads no environment variable for it)`;
  const shown = ways.map((way) => way.join(" + "));
  return shown.length === 1 ? (shown[0] as string) : `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`;
}
