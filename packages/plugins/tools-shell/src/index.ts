/**
 * @rein/tools-shell: a `bash` tool for Rein agents. The default export is the
 * plugin; `createBashTool` returns the tool itself for hosts that list tools.
 */
import { definePlugin, Type } from "@rein/sdk";
import { createBashTool } from "./bash.js";

export {
  BASH_DEFAULTS,
  type BashDetails,
  type BashToolOptions,
  type BashUpdateDetails,
  createBashTool,
} from "./bash.js";
export { type CollectedOutput, OutputCollector, type TruncationLimits } from "./output.js";

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
});

export default definePlugin({
  name: "@rein/tools-shell",
  version: "0.1.0",
  description: "A bash tool with timeout, live output, process-group abort and truncated output.",
  options: shellToolsOptionsSchema,
  setup(rein, options) {
    rein.registerTool(createBashTool(options));
  },
});
