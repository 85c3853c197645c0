/**
 * CLI failures: a code, the exit status it maps to, and where the fault is (file
 * and line, plugin, option). User errors print without a stack trace; `--debug`
 * shows it. Create errors only through the factories below.
 */

/**
 * `output`: the answer still did not match `--output-schema` after the repair turn.
 * `parked`: the run waits for a person's approval (`rein approvals`), then `rein run --resume`.
 */
export const ExitCode = { ok: 0, failed: 1, usage: 2, output: 3, parked: 4 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const CliErrorCode = {
  /** The config file is missing, unparsable or invalid. */
  config: "config",
  /** A plugin could not be found, loaded or set up. */
  plugin: "plugin",
  /** The model is unknown or its credentials are missing. */
  model: "model",
  /** Bad command-line usage. */
  usage: "usage",
  /** A session could not be found or opened. */
  session: "session",
  /** The run itself failed. */
  run: "run",
  /** No such pending approval, or an answer for other arguments (`rein approvals`). */
  approval: "approval",
  /** Project code changed since it was trusted, or was never trusted (`rein trust`). */
  trust: "trust",
  /** A database (the PostgreSQL session store, the worker queue) cannot be used: unreachable, unknown, refused. */
  database: "database",
} as const;
export type CliErrorCode = (typeof CliErrorCode)[keyof typeof CliErrorCode];

export interface CliErrorFields {
  file?: string;
  line?: number;
  /** The config layer the fault was written in (`user`, `project`, `local`, `flags`, `managed`). */
  layer?: string;
  /** The position of the entry at fault in that layer's own `plugins` list. */
  index?: number;
  plugin?: string;
  cause?: unknown;
  /** A hint printed under the message (what to do). */
  hint?: string;
  /** The exit status, for a command that documents its own (`rein check`); default by code. */
  exitCode?: number;
}

export class CliError extends Error {
  override readonly name = "CliError";
  readonly code: CliErrorCode;
  readonly exitCode: number;
  readonly file?: string;
  readonly line?: number;
  readonly layer?: string;
  readonly index?: number;
  readonly plugin?: string;
  readonly hint?: string;

  constructor(code: CliErrorCode, message: string, fields: CliErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    this.exitCode = fields.exitCode ?? (code === "run" ? ExitCode.failed : ExitCode.usage);
    if (fields.file !== undefined) this.file = fields.file;
    if (fields.line !== undefined) this.line = fields.line;
    if (fields.layer !== undefined) this.layer = fields.layer;
    if (fields.index !== undefined) this.index = fields.index;
    if (fields.plugin !== undefined) this.plugin = fields.plugin;
    if (fields.hint !== undefined) this.hint = fields.hint;
  }
}

/** `file:line: message`, as editors and terminals link it. */
const located = (file: string | undefined, line: number | undefined, message: string) =>
  file ? `${file}${line ? `:${line}` : ""}: ${message}` : message;

export const configError = (message: string, fields: CliErrorFields = {}) =>
  new CliError(CliErrorCode.config, located(fields.file, fields.line, message), fields);

export const pluginError = (message: string, fields: CliErrorFields = {}) =>
  new CliError(CliErrorCode.plugin, located(fields.file, fields.line, message), fields);

export const trustError = (message: string, fields: CliErrorFields = {}) =>
  new CliError(CliErrorCode.trust, located(fields.file, fields.line, message), fields);

/** `at`: where the model's name was written (for an unknown id), when a layer file wrote it. */
export const modelError = (
  message: string,
  hint?: string,
  at: Pick<CliErrorFields, "file" | "line" | "layer"> = {},
) =>
  new CliError(CliErrorCode.model, located(at.file, at.line, message), {
    ...at,
    ...(hint === undefined ? {} : { hint }),
  });

export const usageError = (message: string, hint?: string) =>
  new CliError(CliErrorCode.usage, message, hint === undefined ? {} : { hint });

export const sessionNotFound = (message: string, cause?: unknown) =>
  new CliError(CliErrorCode.session, message, { cause });

/** Another live run holds the session's lock. */
export const sessionInUse = (message: string, cause?: unknown) =>
  new CliError(CliErrorCode.session, message, {
    cause,
    hint: "wait for that run to finish, or start a new session (leave out --session/--continue)",
  });

/** The same failure with another exit status (a command with its own exit codes). */
export const withExitCode = (error: CliError, exitCode: number) =>
  new CliError(error.code, error.message, {
    cause: error.cause,
    exitCode,
    ...(error.file !== undefined ? { file: error.file } : {}),
    ...(error.line !== undefined ? { line: error.line } : {}),
    ...(error.layer !== undefined ? { layer: error.layer } : {}),
    ...(error.index !== undefined ? { index: error.index } : {}),
    ...(error.plugin !== undefined ? { plugin: error.plugin } : {}),
    ...(error.hint !== undefined ? { hint: error.hint } : {}),
  });

/** The session waits on parked tool calls (a new prompt), or on an unanswered one (a resume). */
export const sessionParked = (message: string, cause?: unknown) =>
  new CliError(CliErrorCode.session, message, {
    cause,
    hint: "rein approvals list; answer with rein approvals approve|deny <id>, then rein run --session <id> --resume",
  });

export const approvalRefused = (message: string, cause?: unknown) =>
  new CliError(CliErrorCode.approval, message, { cause, hint: "see rein approvals list --all" });

export const runFailed = (message: string, cause?: unknown) =>
  new CliError(CliErrorCode.run, message, { cause });
