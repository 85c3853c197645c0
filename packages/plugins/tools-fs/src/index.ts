/**
 * @rein/tools-fs: file tools for Rein agents (read, write, edit, ls, find, grep),
 * confined to a root directory. The default export is the plugin; `createFsTools`
 * returns the same tools as a plain array (a tool pack) for hosts that list tools.
 */
import { type AnyAgentTool, definePlugin, protectedFiles, Type, textMasks, walkExclusions } from "@rein/sdk";
import { type FsToolsOptions, resolveOptions } from "./shared.js";
import { createEditTool } from "./tools/edit.js";
import { createFindTool } from "./tools/find.js";
import { createGrepTool } from "./tools/grep.js";
import { createLsTool } from "./tools/ls.js";
import { createReadTool } from "./tools/read.js";
import { createWriteTool } from "./tools/write.js";

export { openDirectory, openFile } from "./confined-open.js";
export { isInside, type Root, resolveRoot, type Target, ToolInputError, targetOf } from "./paths.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_IMAGE_BYTES,
  DEFAULT_MAX_LINES,
  type FsToolsOptions,
  PROTECTED_PATHS,
  type ResolvedFsOptions,
} from "./shared.js";
export { createEditTool, type EditDetails } from "./tools/edit.js";
export { createFindTool, DEFAULT_FIND_LIMIT, type FindDetails } from "./tools/find.js";
export { createGrepTool, DEFAULT_GREP_LIMIT, type GrepDetails } from "./tools/grep.js";
export { createLsTool, DEFAULT_LS_LIMIT, type LsDetails } from "./tools/ls.js";
export { createReadTool, type ReadDetails, sniffImage } from "./tools/read.js";
export { createWriteTool, type WriteDetails } from "./tools/write.js";

/** The plugin's options schema (all optional; defaults in `FsToolsOptions`). */
export const fsToolsOptionsSchema = Type.Object({
  root: Type.Optional(
    Type.String({ description: "Directory the tools are confined to (default: the working directory)." }),
  ),
  maxBytes: Type.Optional(Type.Integer({ minimum: 1, description: "Most bytes of text per result." })),
  maxLines: Type.Optional(Type.Integer({ minimum: 1, description: "Most lines read returns at once." })),
  maxImageBytes: Type.Optional(Type.Integer({ minimum: 1, description: "Largest image read returns." })),
  protectedPaths: Type.Optional(
    Type.Array(Type.String(), {
      description: "More globs write and edit refuse (Rein's and git's own state is refused always).",
    }),
  ),
});

/** The six file tools with the given options, as a plain array. */
export function createFsTools(options: FsToolsOptions = {}): AnyAgentTool[] {
  const resolved = resolveOptions(options);
  return [
    createReadTool(resolved),
    createWriteTool(resolved),
    createEditTool(resolved),
    createLsTool(resolved),
    createFindTool(resolved),
    createGrepTool(resolved),
  ];
}

export default definePlugin({
  name: "@rein/tools-fs",
  version: "0.1.0",
  description: "File tools: read, write, edit, ls, find, grep, confined to a root directory.",
  options: fsToolsOptionsSchema,
  setup(rein, options) {
    // Walks honour the harness's path rules, and grep masks lines before cutting them.
    const tools = createFsTools({
      ...options,
      exclusions: walkExclusions(rein),
      masks: textMasks(rein),
      protectedFiles: protectedFiles(rein),
    });
    for (const tool of tools) rein.registerTool(tool);
  },
});
