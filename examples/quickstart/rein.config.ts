import { defineConfig } from "@rein/sdk";
import readOnlyPolicy from "./plugins/read-only-policy.ts";

export default defineConfig({
  // A scripted model: the agent runs offline, with no API key. Swap in "anthropic/claude-sonnet-4-5".
  model: {
    script: [
      { text: "Let me look around.", toolCalls: [{ name: "ls", args: {} }] },
      { toolCalls: [{ name: "read", args: { path: "README.md" } }] },
      { toolCalls: [{ name: "write", args: { path: "README.md", content: "overwritten" } }] },
      "This folder is Rein's quick start: a config (rein.config.ts), a tool pack and a read-only policy. I listed and read the files; the policy did not let me change README.md.",
    ],
  },
  plugins: ["./plugins/files.ts", [readOnlyPolicy, { protect: ["README.md", "rein.config.ts"] }]],
  session: { dir: ".rein/sessions" },
});
