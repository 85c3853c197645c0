import { defineConfig } from "@rein/sdk";

export default defineConfig({
  // A scripted model: the agent runs offline, with no API key. Swap in "anthropic/claude-sonnet-4-5".
  model: {
    script: [
      { text: "Let me look around.", toolCalls: [{ name: "ls", args: {} }] },
      { toolCalls: [{ name: "read", args: { path: "README.md" } }] },
      { toolCalls: [{ name: "write", args: { path: "./README.md", content: "overwritten" } }] },
      "This folder is Rein's quick start: a config that loads a file tool pack and a policy. I listed and read the files; the policy did not let me change README.md.",
    ],
  },
  plugins: [
    "@rein/tools-fs", // read, write, edit, ls, find, grep - confined to this folder
    [
      "@rein/plugin-policy",
      {
        rules: [
          { id: "reads", rule: "read(*)", decision: "allow", reason: "reading is harmless" },
          {
            id: "protected-files",
            rule: "write(README.md)",
            decision: "deny",
            reason: "README.md is protected in this quick start",
            examples: { match: ["write(./README.md)"], notMatch: ["write(notes.md)"] },
          },
        ],
      },
    ],
  ],
  session: { dir: ".rein/sessions" },
});
