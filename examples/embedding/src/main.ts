/** Starts the example server on a real model: `ANTHROPIC_API_KEY=... pnpm start`, then
 *  `curl -N -X POST localhost:8787/runs -d '{"prompt":"hello"}'`. */
import { createModels } from "@earendil-works/pi-ai";
import { anthropicProvider } from "@earendil-works/pi-ai/providers/anthropic";
import { reinIdentity } from "@rein/harness";
import { createAgentServer } from "./agent-server.js";

const models = createModels({ identity: reinIdentity() });
models.setProvider(anthropicProvider());
const model = models.getModel("anthropic", "claude-opus-5-5");
if (!model || !(await models.getAuth(model))) {
  console.error("set ANTHROPIC_API_KEY to run the example server on a real model");
  process.exit(2);
}
const server = createAgentServer({
  model: () => ({ model, models }),
  sessionsDir: ".rein/sessions",
});
server.listen(8787, "127.0.0.1", () => console.error("POST http://127.0.0.1:8787/runs"));
