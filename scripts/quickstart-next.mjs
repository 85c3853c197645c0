// Printed after `pnpm quickstart`: how to go on with `rein` from the repository root.
const lines = [
  "",
  "Next, from the repository root (pnpm is `npx --yes pnpm@10.34.9` if it is not installed; on Node older than 22.19, `sh scripts/with-node.sh npx --yes pnpm@10.34.9`):",
  "  pnpm rein -C examples/quickstart sessions list     # the session just recorded",
  "  pnpm rein -C examples/quickstart replay <id>       # re-decide its tool calls with today's policy",
  "  pnpm rein --help                                   # every command",
];
process.stderr.write(`${lines.join("\n")}\n`);
