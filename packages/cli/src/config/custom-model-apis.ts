/** The wire protocols a custom `models[]` entry may speak: pi-ai's chat APIs with a `.lazy` module. */
export const CUSTOM_MODEL_APIS = [
  "openai-completions",
  "openai-responses",
  "anthropic-messages",
  "google-generative-ai",
  "mistral-conversations",
  "bedrock-converse-stream",
  "azure-openai-responses",
] as const;

export type CustomModelApi = (typeof CUSTOM_MODEL_APIS)[number];
