/**
 * Client retries are off for every model, so the harness's visible retry is the only
 * one: `maxRetries: 0` for the SDK clients that take it, `AWS_MAX_ATTEMPTS=1` for the
 * AWS SDK behind Bedrock (which takes no retry option from pi-ai), and a value the user
 * set is kept.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { clientRetriesOff } from "../src/config/client-retries.js";

const model = (api: string) => ({ id: "m", provider: "p", api, baseUrl: "http://127.0.0.1:1" }) as Model<Api>;

describe("client retries off", () => {
  it("Bedrock: the AWS SDK gets one attempt through AWS_MAX_ATTEMPTS", () => {
    const env: NodeJS.ProcessEnv = {};
    expect(clientRetriesOff(model("bedrock-converse-stream"), env)).toEqual({ maxRetries: 0 });
    expect(env).toEqual({ AWS_MAX_ATTEMPTS: "1" });
  });

  it("a user's own AWS_MAX_ATTEMPTS is kept", () => {
    const env: NodeJS.ProcessEnv = { AWS_MAX_ATTEMPTS: "5" };
    clientRetriesOff(model("bedrock-converse-stream"), env);
    expect(env).toEqual({ AWS_MAX_ATTEMPTS: "5" });
  });

  it("other APIs: maxRetries 0 and no environment change", () => {
    for (const api of [
      "anthropic-messages",
      "openai-responses",
      "openai-completions",
      "google-generative-ai",
    ]) {
      const env: NodeJS.ProcessEnv = {};
      expect(clientRetriesOff(model(api), env)).toEqual({ maxRetries: 0 });
      expect(env).toEqual({});
    }
  });
});
