/**
 * The plugin's options: which MCP servers to connect and how.
 *
 * Invariant: `resolveServer` turns one validated entry into a fully resolved
 * server spec (absolute cwd, environment and headers expanded from the process
 * environment, timeouts filled in) or throws an `McpToolError` naming the server
 * and the option at fault. A stdio server's environment is a small safe base
 * (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus what its `env` names: Rein's own
 * environment (API keys included) is never passed on wholesale.
 */
import { resolve } from "node:path";
import { type PathArgs, type Static, type ToolRisk, Type } from "@rein/sdk";
import { type SandboxOptions, shellToolsOptionsSchema } from "@rein/tools-shell";
import { invalidServer, missingEnv } from "./errors.js";
import { MAX_SERVER_NAME, SERVER_NAME_PATTERN } from "./names.js";

const Risk = Type.Union([
  Type.Literal("read"),
  Type.Literal("write"),
  Type.Literal("exec"),
  Type.Literal("network"),
]);
const Millis = Type.Integer({ minimum: 1, maximum: 3_600_000 });

export const serverOptionsSchema = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1, description: "stdio: the program to start." })),
    args: Type.Optional(Type.Array(Type.String(), { description: "stdio: its arguments." })),
    env: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
        description: "stdio: extra environment; values may use ${VAR} from Rein's environment.",
      }),
    ),
    cwd: Type.Optional(Type.String({ description: "stdio: working directory (default: Rein's)." })),
    sandbox: shellToolsOptionsSchema.properties.sandbox,
    url: Type.Optional(Type.String({ minLength: 1, description: "Streamable HTTP: the server's URL." })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
        description: 'HTTP headers; values may use ${VAR}, e.g. "Bearer ${GITHUB_TOKEN}".',
      }),
    ),
    include: Type.Optional(Type.Array(Type.String(), { description: "Only these MCP tools." })),
    exclude: Type.Optional(Type.Array(Type.String(), { description: "Not these MCP tools." })),
    risks: Type.Optional(
      Type.Record(Type.String(), Risk, { description: "Risk per MCP tool name, overriding annotations." }),
    ),
    trustAnnotations: Type.Optional(
      Type.Boolean({ description: "Derive risk from the server's annotations (default true); false: exec." }),
    ),
    paths: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Union([
          Type.Array(Type.String()),
          Type.Record(Type.String(), Type.Union([Type.Literal("file"), Type.Literal("walk")])),
        ]),
        {
          description:
            'Per MCP tool name (or *), which arguments are paths: ["path"] (files) or { path: "walk" } for a directory it lists or searches.',
        },
      ),
    ),
    protocol: Type.Optional(
      Type.Union([Type.Literal("auto"), Type.Literal("2026-07-28"), Type.Literal("2025-11-25")], {
        description:
          'MCP revision: "auto" (default: 2026-07-28 when the server offers it, else the 2025 handshake), "2026-07-28" only, or "2025-11-25" (the 2025 handshake, no probe).',
      }),
    ),
    callTimeoutMs: Type.Optional(Millis),
    startTimeoutMs: Type.Optional(Millis),
    required: Type.Optional(
      Type.Boolean({ description: "Fail plugin setup when this server cannot start (default false)." }),
    ),
  },
  { additionalProperties: false },
);

export const mcpOptionsSchema = Type.Object(
  {
    servers: Type.Record(Type.String(), serverOptionsSchema, {
      description: "MCP servers by name; tools become mcp__<name>__<tool>.",
    }),
    callTimeoutMs: Type.Optional(Millis),
    startTimeoutMs: Type.Optional(Millis),
  },
  { additionalProperties: false },
);

export type ServerOptions = Static<typeof serverOptionsSchema>;
export type McpOptions = Static<typeof mcpOptionsSchema>;

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
export const DEFAULT_START_TIMEOUT_MS = 30_000;

export type ServerTransport =
  | {
      kind: "stdio";
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd: string;
      sandbox?: SandboxOptions;
    }
  | { kind: "http"; url: URL; headers: Record<string, string> };

/** Which MCP revision a server is spoken to with (option `protocol`). */
export type ProtocolChoice = "auto" | "2026-07-28" | "2025-11-25";

export interface ServerSpec {
  name: string;
  transport: ServerTransport;
  include: readonly string[] | undefined;
  exclude: readonly string[];
  risks: Readonly<Record<string, ToolRisk>>;
  trustAnnotations: boolean;
  /** Per MCP tool name (or `*`): its path arguments and their kind. */
  paths: Readonly<Record<string, PathArgs>>;
  protocol: ProtocolChoice;
  callTimeoutMs: number;
  startTimeoutMs: number;
  required: boolean;
}

const SAFE_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/** Expands `${VAR}` from `env`; a variable that is not set is an error naming it. */
export function expandVariables(
  server: string,
  where: string,
  value: string,
  env: NodeJS.ProcessEnv,
): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const found = env[name];
    if (found === undefined) throw missingEnv(server, where, name);
    return found;
  });
}

/** Checks a server name without resolving anything (cheap, at setup). */
export function checkServerName(name: string): void {
  if (name.length > MAX_SERVER_NAME || !SERVER_NAME_PATTERN.test(name)) {
    throw invalidServer(
      name,
      `the name must be 1-${MAX_SERVER_NAME} of A-Z a-z 0-9 - and single _ (it becomes part of mcp__${name}__<tool>)`,
    );
  }
}

export function resolveServer(
  name: string,
  options: ServerOptions,
  defaults: { cwd: string; callTimeoutMs?: number | undefined; startTimeoutMs?: number | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ServerSpec {
  checkServerName(name);
  const hasCommand = options.command !== undefined;
  const hasUrl = options.url !== undefined;
  if (hasCommand === hasUrl) {
    throw invalidServer(
      name,
      "give either command (a stdio server) or url (a Streamable HTTP server), not both or neither",
    );
  }
  let transport: ServerTransport;
  if (hasCommand) {
    if (options.headers) throw invalidServer(name, "headers only apply to url servers");
    const childEnv: Record<string, string> = {};
    for (const key of SAFE_ENV) {
      const value = env[key];
      if (value !== undefined && !value.startsWith("()")) childEnv[key] = value;
    }
    for (const [key, value] of Object.entries(options.env ?? {})) {
      childEnv[key] = expandVariables(name, `env.${key}`, value, env);
    }
    transport = {
      kind: "stdio",
      command: options.command as string,
      args: options.args ?? [],
      env: childEnv,
      cwd: resolve(defaults.cwd, options.cwd ?? "."),
      ...(options.sandbox !== undefined ? { sandbox: options.sandbox as SandboxOptions } : {}),
    };
  } else {
    for (const key of ["args", "env", "cwd", "sandbox"] as const) {
      if (options[key] !== undefined)
        throw invalidServer(name, `${key} only applies to command (stdio) servers`);
    }
    let url: URL;
    try {
      url = new URL(options.url as string);
    } catch {
      throw invalidServer(name, `url ${JSON.stringify(options.url)} is not a valid URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw invalidServer(name, `url must be http: or https:, got ${url.protocol}`);
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) {
      headers[key] = expandVariables(name, `headers.${key}`, value, env);
    }
    transport = { kind: "http", url, headers };
  }
  return {
    name,
    transport,
    include: options.include,
    exclude: options.exclude ?? [],
    risks: options.risks ?? {},
    trustAnnotations: options.trustAnnotations ?? true,
    paths: pathOptions(options.paths ?? {}),
    protocol: options.protocol ?? "auto",
    callTimeoutMs: options.callTimeoutMs ?? defaults.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    startTimeoutMs: options.startTimeoutMs ?? defaults.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    required: options.required ?? false,
  };
}

/** `["a", "b"]` is `{ a: "file", b: "file" }`. */
function pathOptions(given: NonNullable<ServerOptions["paths"]>): Record<string, PathArgs> {
  const out: Record<string, PathArgs> = {};
  for (const [tool, args] of Object.entries(given)) {
    out[tool] = Array.isArray(args)
      ? Object.fromEntries(args.map((arg) => [arg, "file" as const]))
      : { ...(args as PathArgs) };
  }
  return out;
}

/** A server's transport in one line, for status and errors (never header values). */
export function describeTransport(transport: ServerTransport): string {
  if (transport.kind === "http") return `http ${transport.url.origin}${transport.url.pathname}`;
  return `stdio ${[transport.command, ...transport.args].join(" ")}`;
}
