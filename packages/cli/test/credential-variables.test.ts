/**
 * The credential hint names what pi-ai really reads: for every provider pi-ai
 * knows, each way `credentialVariables` lists, set alone in an otherwise empty
 * environment, makes pi-ai's own `getEnvApiKey` find a credential, and an empty
 * environment finds none. So a hint can never name a variable pi-ai ignores.
 */
import { getEnvApiKey, getProviders } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { credentialVariables, keyVariable } from "../src/config/credential-variables.js";

const real = process.env;
afterEach(() => {
  process.env = real;
});

const lookUp = (provider: string, env: Record<string, string>) => {
  process.env = { ...env };
  try {
    return getEnvApiKey(provider);
  } finally {
    process.env = real;
  }
};

describe("credential variables come from pi-ai's lookup", () => {
  it.each(getProviders())("%s: each listed way is a credential pi-ai accepts", (provider) => {
    const ways = credentialVariables(provider);
    expect(lookUp(provider, {})).toBeUndefined();
    for (const way of ways) {
      expect(
        lookUp(provider, Object.fromEntries(way.map((name) => [name, "value"]))),
        way.join("+"),
      ).toBeDefined();
      // Every variable of a pair is needed: each one alone is not enough.
      if (way.length > 1)
        for (const name of way) expect(lookUp(provider, { [name]: "value" })).toBeUndefined();
    }
  });

  it("names the real variables where a hand-written map went wrong", () => {
    expect(credentialVariables("amazon-bedrock")).toEqual(
      expect.arrayContaining([
        ["AWS_PROFILE"],
        ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
        ["AWS_BEARER_TOKEN_BEDROCK"],
      ]),
    );
    expect(keyVariable("github-copilot")).toBe("COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN");
    expect(keyVariable("huggingface")).toBe("HF_TOKEN");
    expect(keyVariable("google")).toBe("GEMINI_API_KEY");
  });

  it("puts the real environment back", () => {
    const before = process.env;
    credentialVariables("amazon-bedrock");
    credentialVariables("anthropic");
    expect(process.env).toBe(before);
  });
});
