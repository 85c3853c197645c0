/**
 * Provider clients retry on their own, silently, with their own backoff; the harness
 * retries too, announced by `retry` events. One mechanism: the clients' retries are off
 * and the harness's bounded, visible retry is the only one. The OpenAI, Anthropic and
 * Google clients take `maxRetries: 0` per request. pi-ai's Bedrock client takes no retry
 * option, and the AWS SDK it builds (one per request) retries throttling and 5xx answers
 * up to 3 attempts (measured against a loopback server: `amz-sdk-request: attempt=1..3;
 * max=3`); it reads `AWS_MAX_ATTEMPTS` for each client, so for a Bedrock model that is
 * set to 1 unless the user set it.
 */
import type { Api, Model } from "@earendil-works/pi-ai";

/** APIs whose client's retries are configured through the AWS SDK's environment. */
const AWS_SDK_APIS = new Set(["bedrock-converse-stream"]);

/** The stream options that turn `model`'s client retries off (and the AWS SDK's, for Bedrock). */
export function clientRetriesOff(model: Model<Api>, env: NodeJS.ProcessEnv = process.env): { maxRetries: 0 } {
  if (AWS_SDK_APIS.has(model.api) && env.AWS_MAX_ATTEMPTS === undefined) env.AWS_MAX_ATTEMPTS = "1";
  return { maxRetries: 0 };
}
