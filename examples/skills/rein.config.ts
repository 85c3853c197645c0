import { defineConfig } from "@rein/sdk";

export default defineConfig({
  // A scripted model: offline, no API key. It does what a real model would do with this skill.
  model: {
    script: [
      { toolCalls: [{ name: "skill", args: { name: "changelog-entry" } }] },
      {
        toolCalls: [{ name: "read", args: { path: ".agents/skills/changelog-entry/references/format.md" } }],
      },
      { toolCalls: [{ name: "read", args: { path: "CHANGES.txt" } }] },
      // The skill's allowed-tools leave no write tool: this call is refused, whatever the policy says.
      { toolCalls: [{ name: "write", args: { path: "CHANGELOG.md", content: "## 1.4.0" } }] },
      "## 1.4.0\n- Added a --json flag to the list command\n- Changed the config loader to report the line of a bad option",
    ],
  },
  plugins: ["@rein/tools-fs"],
  session: { dir: ".rein/sessions" },
});
