/** Starts the example server on a real model: `ANTHROPIC_API_KEY=... pnpm start`, then
 *  `curl -N -X POST localhost:8787/runs -d '{"prompt":"hello"}'`. */
import { getEnvApiKey, getModel } from "@mariozechner/pi-ai";
import { createAgentServer } from "./agent-server.js";

const apiKey = getEnvApiKey("anthropic");
if (!apiKey) {
  console.error("set ANTHROPIC_API_KEY to run the example server on a real model");
  process.exit(2);
}
const server = createAgentServer({
  model: () => getModel("anthropic", "claude-sonnet-4-5"),
  requestOptions: { apiKey },
  sessionsDir: ".rein/sessions",
});
server.listen(8787, "127.0.0.1", () => console.error("POST http://127.0.0.1:8787/runs"));
