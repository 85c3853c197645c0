#!/usr/bin/env node
// The `rein` bin. A committed file rather than dist/bin.js itself, so a package
// manager can link it on a fresh clone before the build has produced dist/.
try {
  await import("../dist/bin.js");
} catch (error) {
  const missing = error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/bin.js");
  if (!missing) throw error;
  process.stderr.write("rein: the CLI is not built yet (no packages/cli/dist)\n  run: pnpm build\n");
  process.exitCode = 2;
}
