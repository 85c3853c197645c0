/**
 * `rein hook serve [--port N]`: the project's stack, built once, answering
 * agent hook events over HTTP on 127.0.0.1 (hook/hook-server.ts) until
 * SIGINT / SIGTERM. The bearer token comes from `$REIN_HOOK_TOKEN` (or
 * `--token-env`), else a random one is printed on stderr with the settings
 * entry to paste.
 */
import { randomBytes } from "node:crypto";
import { inspectionAgent } from "../agent/build-agent.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { prepareHarness } from "../hook/handle-event.js";
import { auditFor, timeoutOf } from "../hook/hook-options.js";
import { startHookServer } from "../hook/hook-server.js";

export interface HookServeOptions {
  port?: string;
  tokenEnv?: string;
  timeout?: string;
}

export async function hookServeCommand(options: HookServeOptions, globals: GlobalOptions): Promise<number> {
  const port = options.port === undefined ? 0 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError(`--port ${options.port}: expected 0-65535`);
  const tokenEnv = options.tokenEnv ?? "REIN_HOOK_TOKEN";
  const given = process.env[tokenEnv];
  if (options.tokenEnv && !given) throw usageError(`--token-env ${tokenEnv}: the variable is not set`);
  const token = given || randomBytes(24).toString("base64url");
  const timeoutMs = timeoutOf(options.timeout, 20_000);
  const agent = await inspectionAgent(globals);
  prepareHarness(agent.harness);
  const audit = auditFor(agent.loaded, { keepOpen: true });
  const server = await startHookServer({ harness: agent.harness, audit, token, port, timeoutMs });
  process.stderr.write(
    `rein hook serve: listening on ${server.url}/hook/claude-code (Authorization: Bearer <token>)\n`,
  );
  if (!given) process.stderr.write(`rein hook serve: token ${token} (set ${tokenEnv} to choose it)\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  audit?.close();
  await agent.dispose();
  return ExitCode.ok;
}
