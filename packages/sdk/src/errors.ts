/**
 * Every failure the SDK raises is an `SdkError` with a stable `code` and, where a
 * plugin or tool is at fault, its name in `plugin` / `tool`. Callers (the CLI,
 * tests) switch on those fields, never on message text; messages are for people.
 * Create errors only through the factories below so codes and fields stay consistent.
 */
import { HarnessError } from "@rein/harness";

export const SdkErrorCode = {
  /** A plugin's options do not match its schema. */
  invalidOptions: "invalid_options",
  /** Two plugins (or a plugin and the harness) register the same tool name. */
  duplicateTool: "duplicate_tool",
  /** Two plugins with the same name were loaded into one harness. */
  duplicatePlugin: "duplicate_plugin",
  /** A plugin's `setup` threw or rejected. */
  pluginSetup: "plugin_setup",
  /** One or more cleanups failed while disposing plugins (all were still attempted). */
  pluginCleanup: "plugin_cleanup",
  /** Something passed as a plugin is not one (bad name, no setup, bad schema, bad entry). */
  invalidPlugin: "invalid_plugin",
  /** A `defineTool` definition is malformed. */
  invalidTool: "invalid_tool",
  /** A plugin used its `rein` object after it was disposed. */
  pluginDisposed: "plugin_disposed",
  /** A plugin asked for something the SDK deliberately does not offer (e.g. hook interceptors). */
  unsupported: "unsupported",
  /** A path argument cannot be resolved (NUL byte, too long, a symlink loop, not a string). */
  invalidPath: "invalid_path",
  /** A test probed a tool name the harness does not have, without opting in (`unregistered`). */
  unknownTool: "unknown_tool",
} as const;

export type SdkErrorCode = (typeof SdkErrorCode)[keyof typeof SdkErrorCode];

export interface SdkErrorFields {
  /** The plugin at fault (for a tool pack: `tools[<index>]`). */
  plugin?: string;
  /** The tool concerned. */
  tool?: string;
  /** The other party of a conflict (the plugin that registered the tool first, or `harness`). */
  otherPlugin?: string;
  /** The option path (JSON pointer, `""` for the options object itself). */
  path?: string;
  /** The hook concerned. */
  hook?: string;
  /** The position of the entry at fault in the list given to `loadPlugins` (`plugins[index]`). */
  index?: number;
  /** For `plugin_cleanup`: each failure, in disposal order. */
  errors?: readonly SdkError[];
  /** For `unknown_tool`: the registered name closest to the one given, if any is close. */
  suggestion?: string;
  cause?: unknown;
}

export class SdkError extends Error {
  override readonly name = "SdkError";
  readonly code: SdkErrorCode;
  readonly plugin?: string;
  readonly tool?: string;
  readonly otherPlugin?: string;
  readonly path?: string;
  readonly hook?: string;
  readonly index?: number;
  readonly errors?: readonly SdkError[];
  readonly suggestion?: string;

  constructor(code: SdkErrorCode, message: string, fields: SdkErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    if (fields.plugin !== undefined) this.plugin = fields.plugin;
    if (fields.tool !== undefined) this.tool = fields.tool;
    if (fields.otherPlugin !== undefined) this.otherPlugin = fields.otherPlugin;
    if (fields.path !== undefined) this.path = fields.path;
    if (fields.hook !== undefined) this.hook = fields.hook;
    if (fields.index !== undefined) this.index = fields.index;
    if (fields.errors !== undefined) this.errors = fields.errors;
    if (fields.suggestion !== undefined) this.suggestion = fields.suggestion;
  }
}

export function isSdkError(value: unknown, code?: SdkErrorCode): value is SdkError {
  return value instanceof SdkError && (code === undefined || value.code === code);
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const invalidOptions = (plugin: string, path: string, problem: string) =>
  new SdkError(SdkErrorCode.invalidOptions, `plugin "${plugin}": option ${path || "(root)"} ${problem}`, {
    plugin,
    path,
  });

export const duplicateTool = (tool: string, plugin: string, otherPlugin: string) =>
  new SdkError(
    SdkErrorCode.duplicateTool,
    otherPlugin === "harness"
      ? `plugin "${plugin}" registers tool "${tool}", which the harness already has`
      : `tool "${tool}" is registered by both plugin "${otherPlugin}" and plugin "${plugin}"`,
    { plugin, tool, otherPlugin },
  );

export const duplicatePlugin = (plugin: string) =>
  new SdkError(
    SdkErrorCode.duplicatePlugin,
    `plugin "${plugin}" is loaded twice (plugin names must be unique)`,
    {
      plugin,
    },
  );

/** The plugin's own error behind the harness driver's tag (a timeout has none: the driver's message says it). */
export const pluginCause = (error: unknown): unknown =>
  error instanceof HarnessError && error.cause !== undefined ? error.cause : error;

export const pluginSetupFailed = (plugin: string, cause: unknown) =>
  new SdkError(SdkErrorCode.pluginSetup, `plugin "${plugin}" failed in setup: ${describe(cause)}`, {
    plugin,
    hook: "setup",
    cause,
  });

export const pluginCleanupFailed = (plugin: string, cause: unknown) =>
  new SdkError(SdkErrorCode.pluginCleanup, `plugin "${plugin}" failed in cleanup: ${describe(cause)}`, {
    plugin,
    hook: "cleanup",
    cause,
  });

export const cleanupFailures = (errors: readonly SdkError[]) =>
  new SdkError(
    SdkErrorCode.pluginCleanup,
    `${errors.length} plugin cleanup${errors.length > 1 ? "s" : ""} failed: ${errors.map((e) => e.message).join("; ")}`,
    { errors, ...(errors.length === 1 && errors[0]?.plugin ? { plugin: errors[0].plugin } : {}) },
  );

export const invalidPlugin = (
  message: string,
  plugin?: string,
  fields: Omit<SdkErrorFields, "plugin"> = {},
) =>
  new SdkError(SdkErrorCode.invalidPlugin, message, {
    ...fields,
    ...(plugin === undefined ? {} : { plugin }),
  });

export const invalidTool = (tool: string | undefined, problem: string) =>
  new SdkError(
    SdkErrorCode.invalidTool,
    `defineTool(${tool === undefined ? "?" : JSON.stringify(tool)}): ${problem}`,
    tool === undefined ? {} : { tool },
  );

/** A tool-call probe that contradicts the registered tool (e.g. states another risk). */
export const invalidProbe = (tool: string, problem: string) =>
  new SdkError(SdkErrorCode.invalidTool, `tool call probe for "${tool}": ${problem}`, { tool });

/**
 * `checkToolCall` was given a tool name the harness does not have: almost always a
 * typo that would make a policy test pass for the wrong reason.
 */
export const unknownTool = (tool: string, registered: readonly string[], suggestion: string | undefined) =>
  new SdkError(
    SdkErrorCode.unknownTool,
    `checkToolCall: no tool "${tool}" is registered in this harness${
      suggestion === undefined ? "" : `; did you mean "${suggestion}"?`
    } (registered: ${registered.join(", ") || "none"}). To probe an unregistered tool on purpose, pass { unregistered: "refuse" } (denied as a run would) or { unregistered: "evaluate" } (the gates decide on a stand-in).`,
    { tool, ...(suggestion === undefined ? {} : { suggestion }) },
  );

export const pluginDisposed = (plugin: string, what: string) =>
  new SdkError(SdkErrorCode.pluginDisposed, `plugin "${plugin}" was disposed; it can no longer ${what}`, {
    plugin,
  });

/** The same error, marked with the position of the entry at fault. */
export const atEntry = (error: SdkError, index: number) =>
  new SdkError(error.code, error.message, {
    ...(error.plugin !== undefined ? { plugin: error.plugin } : {}),
    ...(error.tool !== undefined ? { tool: error.tool } : {}),
    ...(error.otherPlugin !== undefined ? { otherPlugin: error.otherPlugin } : {}),
    ...(error.path !== undefined ? { path: error.path } : {}),
    ...(error.hook !== undefined ? { hook: error.hook } : {}),
    ...(error.errors !== undefined ? { errors: error.errors } : {}),
    ...(error.suggestion !== undefined ? { suggestion: error.suggestion } : {}),
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
    index,
  });

/** A plugin used a hook the harness does not have (`rein.hooks.toolgate`). */
export const unknownHook = (plugin: string, hook: string, suggestion: string) =>
  new SdkError(
    SdkErrorCode.invalidPlugin,
    `plugin "${plugin}" uses rein.hooks.${hook}, which does not exist${suggestion}`,
    { plugin, hook },
  );

export const unsupported = (plugin: string, what: string, hook?: string) =>
  new SdkError(SdkErrorCode.unsupported, `plugin "${plugin}": ${what}`, {
    plugin,
    ...(hook === undefined ? {} : { hook }),
  });

export const invalidPath = (input: unknown, problem: string, tool?: string) =>
  new SdkError(
    SdkErrorCode.invalidPath,
    `path ${typeof input === "string" ? JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}...` : input) : String(input)} ${problem}`,
    tool === undefined ? {} : { tool },
  );
