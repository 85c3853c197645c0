#!/usr/bin/env node
// The hook command `rein hook install` writes: `rein-hook.js hook <agent> [options]`.
// It asks this user's warm hook daemon, else decides in process with the full
// `rein` (dist/hook-client.js). A committed file, like rein.js.
try {
  await import("../dist/hook-client.js");
} catch (error) {
  const missing =
    error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/hook-client.js");
  if (!missing) throw error;
  process.stderr.write("rein: the CLI is not built yet (no packages/cli/dist)\n  run: pnpm build\n");
  process.exitCode = 2;
}
