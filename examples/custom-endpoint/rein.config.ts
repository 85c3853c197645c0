import { defineConfig } from "@rein/sdk";

// Ollama: `ollama serve` then `ollama pull qwen2.5-coder`; llama.cpp: `llama-server -m model.gguf --port 8080`
// and set REIN_ENDPOINT=http://127.0.0.1:8080/v1. No API key is needed for a local server.
const endpoint = process.env.REIN_ENDPOINT ?? "http://127.0.0.1:11434/v1";

export default defineConfig({
  model: "local/qwen2.5-coder",
  models: [
    {
      id: "qwen2.5-coder",
      provider: "local",
      baseUrl: endpoint,
      api: "openai-completions",
      contextWindow: 32_768,
      maxTokens: 4_096,
    },
  ],
  plugins: ["./clock.ts"],
});
