/**
 * @rein/tools-shell: a `bash` tool for Rein agents. The default export is the
 * plugin; `createBashTool` returns the tool itself for hosts that list tools.
 */
import { definePlugin, SdkError, stateFolders, Type } from "@rein/sdk";
import { openBashTool } from "./bash.js";
import { gateUnsandboxedRuns } from "./escape.js";
import { DEFAULT_SANDBOX_MODE } from "./sandbox-policy.js";
import { releaseRuntimeIfIdle, runtimeLoaded } from "./sandbox-runtime.js";

export {
  BASH_DEFAULTS,
  type BashDetails,
  type BashToolHandle,
  type BashToolOptions,
  type BashUpdateDetails,
  createBashTool,
  openBashTool,
} from "./bash.js";
export { ESCAPE_ARGUMENT, gateUnsandboxedRuns, type SandboxFacts } from "./escape.js";
export { type CollectedOutput, OutputCollector, type TruncationLimits } from "./output.js";
export {
  DEFAULT_OUTPUT_FILE_MAX_BYTES,
  type MaskPattern,
  type OutputFileOptions,
  OutputFiles,
} from "./output-files.js";
export { checkSandbox, type SandboxCheck } from "./sandbox-check.js";
export {
  DEFAULT_DENY_READ,
  DEFAULT_SANDBOX_MODE,
  type ResolvedSandboxPolicy,
  resolveSandboxPolicy,
  type SandboxFilesystemOptions,
  type SandboxMode,
  type SandboxNetworkOptions,
  type SandboxOptions,
} from "./sandbox-policy.js";
export { releaseRuntimeIfIdle, SANDBOX_ADVICE, SandboxUnavailable } from "./sandbox-runtime.js";
export { sandboxArgv } from "./sandboxed-command.js";

/** The plugin's options schema (all optional; defaults in `BASH_DEFAULTS`). */
export const shellToolsOptionsSchema = Type.Object({
  root: Type.Optional(
    Type.String({ description: "Directory commands run in (default: the working directory)." }),
  ),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: "Default timeout in seconds." })),
  shell: Type.Optional(Type.String({ description: "The shell, run as `<shell> -c <command>`." })),
  env: Type.Optional(
    Type.Record(Type.String(), Type.String(), { description: "Extra environment variables." }),
  ),
  headLines: Type.Optional(
    Type.Integer({ minimum: 0, description: "Lines kept from the start of long output." }),
  ),
  tailLines: Type.Optional(
    Type.Integer({ minimum: 1, description: "Lines kept from the end of long output." }),
  ),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1, description: "Most bytes of output shown." })),
  updateIntervalMs: Type.Optional(
    Type.Integer({ minimum: 0, description: "Least ms between live updates." }),
  ),
  killGraceMs: Type.Optional(Type.Integer({ minimum: 0, description: "Ms between SIGTERM and SIGKILL." })),
  sandbox: Type.Optional(
    Type.Object(
      {
        mode: Type.Optional(
          Type.Union([Type.Literal("off"), Type.Literal("workspace-write"), Type.Literal("read-only")], {
            description: 'The OS sandbox: "workspace-write" (default), "read-only" or "off".',
          }),
        ),
        filesystem: Type.Optional(
          Type.Object(
            {
              allowWrite: Type.Optional(Type.Array(Type.String())),
              denyWrite: Type.Optional(Type.Array(Type.String())),
              denyRead: Type.Optional(Type.Array(Type.String())),
            },
            { additionalProperties: false },
          ),
        ),
        network: Type.Optional(
          Type.Object(
            {
              allowedDomains: Type.Optional(Type.Array(Type.String())),
              deniedDomains: Type.Optional(Type.Array(Type.String())),
            },
            { additionalProperties: false },
          ),
        ),
        bwrapPath: Type.Optional(Type.String({ pattern: "^/" })),
        socatPath: Type.Optional(Type.String({ pattern: "^/" })),
      },
      { additionalProperties: false },
    ),
  ),
  outputFile: Type.Optional(
    Type.Object(
      {
        maxBytes: Type.Optional(Type.Integer({ minimum: 1, description: "Cap of one full-output file." })),
        mask: Type.Optional(
          Type.Array(
            Type.Object(
              {
                name: Type.String({ pattern: "^[A-Za-z0-9_.:-]+$" }),
                pattern: Type.String({ minLength: 1 }),
                flags: Type.Optional(Type.String({ pattern: "^[imsu]*$" })),
              },
              { additionalProperties: false },
            ),
            { description: "Secret patterns masked in the kept file (plugin-redact's `patterns` shape)." },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
});

export default definePlugin({
  name: "@rein/tools-shell",
  version: "0.1.0",
  description: "A bash tool in an OS sandbox, with timeout, live output, abort and truncated output.",
  options: shellToolsOptionsSchema,
  setup(rein, options) {
    (options.outputFile?.mask ?? []).forEach((entry, index) => {
      try {
        new RegExp(entry.pattern, entry.flags);
      } catch (error) {
        const path = `/outputFile/mask/${index}/pattern`;
        throw new SdkError(
          "invalid_options",
          `plugin "${rein.plugin.name}": option ${path}: ${JSON.stringify(entry.pattern)} is not a valid regular expression (${(error as Error).message})`,
          { plugin: rein.plugin.name, path },
        );
      }
    });
    // The host's state folders (a session dir outside `.rein/`) are never writable from the sandbox.
    const folders = stateFolders(rein).list();
    const sandbox =
      folders.length === 0 || options.sandbox?.mode === "off"
        ? options.sandbox
        : {
            ...options.sandbox,
            filesystem: {
              ...options.sandbox?.filesystem,
              denyWrite: [...(options.sandbox?.filesystem?.denyWrite ?? []), ...folders],
            },
          };
    const handle = openBashTool({ ...options, ...(sandbox ? { sandbox } : {}), unsandboxedEscape: "ask" });
    rein.registerTool(handle.tool);
    gateUnsandboxedRuns(rein, handle.tool.name);
    // The sandbox starts once the agent's first request is out, not at setup (where
    // `rein plugins` or `rein tools` would start it for nothing) nor with the first command
    // (which would wait 0.3-0.7 s for it): the model's answer takes longer than the start.
    // "Out": the first response has begun (`message_start` of the assistant). Started
    // earlier (at `turn_start`), importing and starting the runtime (~0.2 s of CPU) ran
    // before the request was written and delayed it; on a loaded 2-core machine a one-call
    // run was faster this way too (bench/first-request.mjs, docs/benchmarks.md "Peers").
    // A run that ends first (a text-only answer) stops it after the runtime's import.
    let preparing: Promise<void> | undefined;
    const done = new AbortController();
    if ((options.sandbox?.mode ?? DEFAULT_SANDBOX_MODE) !== "off") {
      const stop = rein.on("message_start", (event) => {
        if (event.message.role !== "assistant") return;
        stop();
        const timer = setTimeout(() => {
          preparing = handle.prepare(rein.config.cwd, done.signal);
        }, 0);
        timer.unref();
      });
    }
    rein.onDispose(async () => {
      done.abort();
      // A prepare still importing the runtime starts nothing once aborted (it checks the
      // signal after the import), so dispose does not wait out the import (0.1-0.3 s,
      // the whole of a text-only run's exit); one past it is awaited to its end.
      if (runtimeLoaded()) await preparing;
      handle.dispose();
      await releaseRuntimeIfIdle();
    });
  },
});
