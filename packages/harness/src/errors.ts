/**
 * Every public failure of @rein/harness is a `HarnessError` with a stable `code`.
 * Tests and callers switch on `code` (and `plugin` / `hook` / `toolCallId` where a
 * plugin was at fault), never on message text. Create errors only through the
 * factories below so codes and fields stay consistent.
 */

export const HarnessErrorCode = {
  /** A structural operation was called while the harness was not idle. */
  busy: "busy",
  /** A caller passed something malformed (unknown tool, bad id, wrong type). */
  invalidArgument: "invalid_argument",
  /** Plugin code (a tap, a listener, a tool) failed or returned a malformed result. */
  hook: "hook",
  /** The session cannot be read, written or trusted. */
  session: "session",
  /** Another process (or another harness in this one) holds the session's lock. */
  sessionInUse: "session_in_use",
  /** Compaction or tree navigation failed or was cancelled. */
  compaction: "compaction",
  /** The operation was aborted. */
  aborted: "aborted",
  /** A tool's execution failed outside the tool itself. */
  tool: "tool",
  /** The session has parked tool calls (waiting for a person): resolve them and `resume()`. */
  parked: "parked",
  /** No such approval, or it was already answered. */
  approval: "approval",
  /** An approval names other arguments (or another tool) than the parked call: refused. */
  approvalMismatch: "approval_mismatch",
} as const;

export type HarnessErrorCode = (typeof HarnessErrorCode)[keyof typeof HarnessErrorCode];

export interface HarnessErrorFields {
  /** The plugin (tap, listener or tool owner) at fault, when plugin code failed. */
  plugin?: string;
  /** The hook or event being dispatched when plugin code failed. */
  hook?: string;
  /** The tool call being processed, if any. */
  toolCallId?: string;
  /** The plugin's own error code, kept when a plugin error is wrapped (Rollup's `pluginCode`). */
  pluginCode?: string;
  /** The file at fault (session files). */
  file?: string;
  cause?: unknown;
}

export class HarnessError extends Error {
  override readonly name = "HarnessError";
  readonly code: HarnessErrorCode;
  readonly plugin?: string;
  readonly hook?: string;
  readonly toolCallId?: string;
  readonly pluginCode?: string;
  readonly file?: string;

  constructor(code: HarnessErrorCode, message: string, fields: HarnessErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    if (fields.plugin !== undefined) this.plugin = fields.plugin;
    if (fields.hook !== undefined) this.hook = fields.hook;
    if (fields.toolCallId !== undefined) this.toolCallId = fields.toolCallId;
    if (fields.pluginCode !== undefined) this.pluginCode = fields.pluginCode;
    if (fields.file !== undefined) this.file = fields.file;
  }
}

export function isHarnessError(value: unknown, code?: HarnessErrorCode): value is HarnessError {
  return value instanceof HarnessError && (code === undefined || value.code === code);
}

/** The message of anything thrown, for error results and event payloads. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

export const busyError = (operation: string, phase: string) =>
  new HarnessError(HarnessErrorCode.busy, `cannot ${operation} while the harness is busy (phase "${phase}")`);

export const invalidArgument = (message: string, cause?: unknown) =>
  new HarnessError(HarnessErrorCode.invalidArgument, message, { cause });

export const sessionError = (message: string, fields: { file?: string; cause?: unknown } = {}) =>
  new HarnessError(HarnessErrorCode.session, message, fields);

export const sessionInUse = (file: string, holder: string) =>
  new HarnessError(HarnessErrorCode.sessionInUse, `session in use: ${file} is locked by ${holder}`, { file });

export const parkedError = (message: string) => new HarnessError(HarnessErrorCode.parked, message);

export const approvalError = (message: string) => new HarnessError(HarnessErrorCode.approval, message);

export const approvalMismatch = (message: string) =>
  new HarnessError(HarnessErrorCode.approvalMismatch, message);

export const abortedError = (message = "aborted") => new HarnessError(HarnessErrorCode.aborted, message);

/**
 * Plugin code failed. Keeps the plugin's own `code` as `pluginCode` and is never
 * wrapped twice: a HarnessError that already names a plugin passes through.
 */
export function pluginFailure(
  error: unknown,
  where: { plugin: string; hook: string; toolCallId?: string },
  what = "failed",
): HarnessError {
  if (error instanceof HarnessError && error.plugin !== undefined) return error;
  const pluginCode =
    typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
      ? (error as { code: string }).code
      : undefined;
  const call = where.toolCallId ? ` (tool call ${where.toolCallId})` : "";
  return new HarnessError(
    HarnessErrorCode.hook,
    `plugin "${where.plugin}" ${what} in ${where.hook}${call}: ${describeError(error)}`,
    { plugin: where.plugin, hook: where.hook, toolCallId: where.toolCallId, pluginCode, cause: error },
  );
}
