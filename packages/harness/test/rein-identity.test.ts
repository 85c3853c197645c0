/**
 * Rein's client identity per API: every request goes out through `streamThrough`, and a
 * Bedrock request gets a `User-Agent` the AWS SDK can append as one product token
 * (`rein/<version>`); other APIs keep the collection's identity untouched, and a caller's
 * own `User-Agent` always wins.
 */
import type { Api, Context, Model, Models, SimpleStreamOptions } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { streamThrough } from "../src/models/builtin-models.js";
import { reinIdentity, reinIdentityForApi, withReinIdentity } from "../src/models/rein-identity.js";

const model = (api: string) => ({ id: "m", provider: "p", api, baseUrl: "http://127.0.0.1:1" }) as Model<Api>;
const context: Context = { messages: [] };

/** A collection that records the options of each request instead of streaming. */
function recordingModels(): { models: Models; seen: (SimpleStreamOptions | undefined)[] } {
  const seen: (SimpleStreamOptions | undefined)[] = [];
  const models = {
    streamSimple: (_model: Model<Api>, _context: Context, options?: SimpleStreamOptions) => {
      seen.push(options);
      return undefined;
    },
  } as unknown as Models;
  return { models, seen };
}

describe("Rein's identity per API", () => {
  it("a Bedrock request carries User-Agent rein/<version> as a single token, attribution kept from the collection", () => {
    const { models, seen } = recordingModels();
    streamThrough(models)(model("bedrock-converse-stream"), context, { maxRetries: 0 });
    expect(seen[0]).toEqual({
      maxRetries: 0,
      identity: { userAgent: { custom: expect.stringMatching(/^rein\/\d+\.\d+\.\d+$/) } },
    });
    expect(reinIdentityForApi("bedrock-converse-stream")?.attribution).toBeUndefined();
  });

  it("other APIs get no per-request identity: the collection's detailed rein/<version> (...) applies", () => {
    const { models, seen } = recordingModels();
    for (const api of [
      "anthropic-messages",
      "openai-responses",
      "openai-completions",
      "google-generative-ai",
    ]) {
      expect(reinIdentityForApi(api)).toBeUndefined();
      streamThrough(models)(model(api), context, { maxRetries: 0 });
    }
    expect(seen).toEqual(Array(4).fill({ maxRetries: 0 }));
    expect(reinIdentity().userAgent).toEqual({
      custom: expect.stringMatching(/^rein\/\d+\.\d+\.\d+ \(.+; node\/.+\)$/),
    });
  });

  it("withReinIdentity (the CLI's stream function uses it) adds the same token, keeping the other options", () => {
    const signal = new AbortController().signal;
    expect(withReinIdentity("bedrock-converse-stream", { signal })).toEqual({
      signal,
      identity: reinIdentityForApi("bedrock-converse-stream"),
    });
    expect(withReinIdentity("bedrock-converse-stream", undefined)).toEqual({
      identity: reinIdentityForApi("bedrock-converse-stream"),
    });
    expect(withReinIdentity("anthropic-messages", { signal })).toEqual({ signal });
  });

  it("a caller's own User-Agent wins over Rein's Bedrock token", () => {
    const { models, seen } = recordingModels();
    const identity = { userAgent: { custom: "my-app/2.0" } };
    streamThrough(models)(model("bedrock-converse-stream"), context, { identity });
    expect(seen[0]).toEqual({ identity });
  });
});
