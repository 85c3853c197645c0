/**
 * The credential hint names what pi-ai really reads: for every built-in provider, each
 * way `credentialVariables` lists, set alone in an otherwise empty environment, makes
 * pi-ai's own auth resolution find a credential, and an empty environment finds none.
 * So a hint can never name a variable pi-ai ignores.
 */
import { type AuthContext, createModels, type Provider } from "@earendil-works/pi-ai";
import { builtinProviders } from "@earendil-works/pi-ai/providers/all";
import { describe, expect, it } from "vitest";
import { credentialVariables, keyVariable } from "../src/config/credential-variables.js";

/** pi-ai's own answer for `provider` in an environment holding exactly `env` (and no files). */
async function lookUp(provider: Provider, env: Record<string, string>) {
  const authContext: AuthContext = { env: async (name) => env[name], fileExists: async () => false };
  const models = createModels({ authContext });
  models.setProvider(provider);
  return models.getAuth(provider.id).catch(() => undefined);
}

const providers = builtinProviders();

describe("credential variables come from pi-ai's lookup", () => {
  it("covers every built-in provider", () => {
    expect(providers.length).toBeGreaterThan(20);
  });

  it.each(providers.map((provider) => [provider.id, provider] as const))(
    "%s: each listed way is a credential pi-ai accepts",
    async (_id, provider) => {
      const ways = await credentialVariables(provider);
      expect(await lookUp(provider, {})).toBeUndefined();
      for (const way of ways) {
        expect(
          await lookUp(provider, Object.fromEntries(way.map((name) => [name, "value"]))),
          way.join("+"),
        ).toBeDefined();
        // Every variable of a pair is needed: each one alone is not enough.
        if (way.length > 1)
          for (const name of way) expect(await lookUp(provider, { [name]: "value" })).toBeUndefined();
      }
    },
  );

  it("names the real variables of providers whose names are easy to get wrong", async () => {
    const byId = (id: string) => providers.find((provider) => provider.id === id) as Provider;
    expect(await credentialVariables(byId("amazon-bedrock"))).toEqual(
      expect.arrayContaining([
        ["AWS_PROFILE"],
        ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
        ["AWS_BEARER_TOKEN_BEDROCK"],
      ]),
    );
    // Read all at once and needed together: one way of three variables.
    expect(await keyVariable("cloudflare-ai-gateway")).toBe(
      "CLOUDFLARE_API_KEY + CLOUDFLARE_ACCOUNT_ID + CLOUDFLARE_GATEWAY_ID",
    );
    expect(await keyVariable("cloudflare-workers-ai")).toBe("CLOUDFLARE_API_KEY + CLOUDFLARE_ACCOUNT_ID");
    expect(await keyVariable("huggingface")).toBe("HF_TOKEN");
    expect(await keyVariable("google")).toBe("GEMINI_API_KEY");
    expect(await keyVariable("anthropic")).toContain("ANTHROPIC_API_KEY");
  });

  it("never reads or changes the real environment", async () => {
    const before = { ...process.env };
    process.env.ANTHROPIC_API_KEY = "real-key-must-not-count";
    try {
      expect(await keyVariable("anthropic")).toContain("ANTHROPIC_API_KEY");
      const anthropic = providers.find((provider) => provider.id === "anthropic") as Provider;
      expect(await lookUp(anthropic, {})).toBeUndefined();
    } finally {
      process.env = before;
    }
  });

  it("names no variable for an id pi-ai does not have", async () => {
    expect(await keyVariable("no-such-provider")).toContain("reads no environment variable");
  });
});
