/**
 * Every failure this package raises is an `McpToolError` with a stable `code` and
 * the `server` at fault (and `tool` where one is concerned). Callers and tests
 * switch on those fields; messages are for people and always name the server.
 */

export const McpErrorCode = {
  /** A server entry in the options is malformed (both or neither of command/url, a bad name, ...). */
  invalidServer: "invalid_server",
  /** An environment variable a server's `env` or `headers` names is not set. */
  missingEnv: "missing_env",
  /** The server could not be started or did not answer `initialize` / `tools/list` in time. */
  startFailed: "start_failed",
  /** Two of a server's tools map to the same Rein tool name. */
  nameCollision: "name_collision",
  /** A tool's input schema is not an object schema the validator can compile. */
  invalidSchema: "invalid_schema",
  /** The server is not connected (it crashed and is restarting, or it never started). */
  unavailable: "unavailable",
  /** A `tools/call` did not finish within the call timeout. */
  callTimeout: "call_timeout",
  /** A `tools/call` failed at the protocol level (connection closed, JSON-RPC error). */
  callFailed: "call_failed",
  /** A `paths` entry names an argument the tool does not take. */
  invalidPaths: "invalid_paths",
  /** A path argument outside the root, unusable, or a protected file: the server was not called. */
  pathRefused: "path_refused",
} as const;

export type McpErrorCode = (typeof McpErrorCode)[keyof typeof McpErrorCode];

export class McpToolError extends Error {
  override readonly name = "McpToolError";
  readonly code: McpErrorCode;
  readonly server: string;
  readonly tool?: string;

  constructor(
    code: McpErrorCode,
    server: string,
    message: string,
    options: { tool?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.server = server;
    if (options.tool !== undefined) this.tool = options.tool;
  }
}

export const isMcpToolError = (value: unknown, code?: McpErrorCode): value is McpToolError =>
  value instanceof McpToolError && (code === undefined || value.code === code);

export const describeError = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

export const invalidServer = (server: string, problem: string) =>
  new McpToolError(McpErrorCode.invalidServer, server, `mcp server "${server}": ${problem}`);

export const missingEnv = (server: string, where: string, variable: string) =>
  new McpToolError(
    McpErrorCode.missingEnv,
    server,
    `mcp server "${server}": ${where} needs environment variable ${variable}, which is not set`,
  );

export const startFailed = (server: string, cause: unknown, detail = "") =>
  new McpToolError(
    McpErrorCode.startFailed,
    server,
    `mcp server "${server}" failed to start: ${describeError(cause)}${detail ? ` (${detail})` : ""}`,
    { cause },
  );

export const nameCollision = (server: string, name: string, first: string, second: string) =>
  new McpToolError(
    McpErrorCode.nameCollision,
    server,
    `mcp server "${server}": tools "${first}" and "${second}" both become "${name}"; exclude one of them (option exclude)`,
    { tool: second },
  );

export const invalidSchema = (server: string, tool: string, problem: string) =>
  new McpToolError(
    McpErrorCode.invalidSchema,
    server,
    `mcp server "${server}": tool "${tool}" has an input schema Rein cannot use: ${problem}`,
    { tool },
  );

export const unavailable = (server: string, tool: string, state: string) =>
  new McpToolError(
    McpErrorCode.unavailable,
    server,
    `mcp server "${server}" is not available for tool "${tool}": ${state}`,
    { tool },
  );

export const callTimeout = (server: string, tool: string, ms: number) =>
  new McpToolError(
    McpErrorCode.callTimeout,
    server,
    `mcp server "${server}": tool "${tool}" did not answer within ${ms} ms (option callTimeoutMs)`,
    { tool },
  );

export const callFailed = (server: string, tool: string, cause: unknown) =>
  new McpToolError(
    McpErrorCode.callFailed,
    server,
    `mcp server "${server}": tool "${tool}" failed: ${describeError(cause)}`,
    { tool, cause },
  );

export const invalidPaths = (server: string, tool: string, problem: string) =>
  new McpToolError(McpErrorCode.invalidPaths, server, `mcp server "${server}": ${problem}`, { tool });

export const pathRefused = (server: string, tool: string, problem: string) =>
  new McpToolError(
    McpErrorCode.pathRefused,
    server,
    `mcp server "${server}": tool "${tool}" was not called: ${problem}`,
    { tool },
  );
