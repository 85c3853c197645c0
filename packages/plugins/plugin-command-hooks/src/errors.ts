/**
 * Every failure this package raises is a `CommandHookError` with a stable
 * `code`, the `hook` (event) and the `handler` at fault; tests and callers
 * switch on those fields, messages are for people.
 */

export const CommandHookErrorCode = {
  /** The `settingsFile` option names a file that cannot be read or is not the agents' hooks shape. */
  invalidSettings: "invalid_settings",
  /** A handler's process could not start, was killed, or exited with a code other than 0 and 2. */
  handlerFailed: "handler_failed",
  /** A handler did not answer within its timeout (it was killed). */
  handlerTimeout: "handler_timeout",
  /** A handler's answer is not JSON of the hooks' shape (or an HTTP answer was not 2xx JSON). */
  invalidAnswer: "invalid_answer",
  /** `updatedInput` could not be mapped back onto the Rein tool's arguments. */
  invalidUpdate: "invalid_update",
} as const;
export type CommandHookErrorCode = (typeof CommandHookErrorCode)[keyof typeof CommandHookErrorCode];

export class CommandHookError extends Error {
  override readonly name = "CommandHookError";
  readonly code: CommandHookErrorCode;
  readonly hook: string | undefined;
  readonly handler: string | undefined;

  constructor(
    code: CommandHookErrorCode,
    message: string,
    fields: { hook?: string; handler?: string; cause?: unknown } = {},
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    this.hook = fields.hook;
    this.handler = fields.handler;
  }
}

export const isCommandHookError = (value: unknown, code?: CommandHookErrorCode): value is CommandHookError =>
  value instanceof CommandHookError && (code === undefined || value.code === code);

export const invalidSettings = (file: string, problem: string, cause?: unknown) =>
  new CommandHookError(CommandHookErrorCode.invalidSettings, `settings file ${file}: ${problem}`, { cause });

export const handlerFailed = (hook: string, handler: string, problem: string) =>
  new CommandHookError(CommandHookErrorCode.handlerFailed, `${hook} hook "${handler}" failed: ${problem}`, {
    hook,
    handler,
  });

export const handlerTimeout = (hook: string, handler: string, seconds: number) =>
  new CommandHookError(
    CommandHookErrorCode.handlerTimeout,
    `${hook} hook "${handler}" did not answer within ${seconds} s`,
    {
      hook,
      handler,
    },
  );

export const invalidAnswer = (hook: string, handler: string, problem: string) =>
  new CommandHookError(
    CommandHookErrorCode.invalidAnswer,
    `${hook} hook "${handler}" answered badly: ${problem}`,
    {
      hook,
      handler,
    },
  );

export const invalidUpdate = (hook: string, handler: string, problem: string) =>
  new CommandHookError(
    CommandHookErrorCode.invalidUpdate,
    `${hook} hook "${handler}": updatedInput ${problem}`,
    {
      hook,
      handler,
    },
  );
