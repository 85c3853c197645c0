/**
 * The `@rein/tools-mcp` plugin: configured MCP servers become Rein tools.
 *
 * Invariants:
 * - Servers are connected at setup, concurrently, each within its start timeout
 *   (the tool list has to exist before the first turn's snapshot); a server that
 *   cannot start is reported (log, status entry) and left out, unless it is
 *   `required`, in which case setup fails naming it.
 * - A changed tool list (list_changed, restart) replaces the server's tools
 *   through the harness's setters at once; a running turn keeps its snapshot, so
 *   the change is seen from the next turn on, and a tool the running turn saw
 *   stays callable in it (its `execute` still reaches the server by MCP name).
 * - Dispose closes every server; stdio process groups are gone when it resolves.
 */
import { type AnyAgentTool, definePlugin, protectedFiles, type Rein, traceContext } from "@rein/sdk";
import { ServerConnection } from "./connection.js";
import { describeError, isMcpToolError, McpErrorCode, type McpToolError } from "./errors.js";
import { checkServerName, describeTransport, mcpOptionsSchema, resolveServer } from "./options.js";
import { MCP_STATUS_ENTRY, type McpServerStatus } from "./status.js";
import { buildTools, type ToolEntry } from "./tools.js";

export const PLUGIN_NAME = "@rein/tools-mcp";
export const PLUGIN_VERSION = "0.1.0";

interface Registered {
  tool: AnyAgentTool;
  remove: () => void;
}

interface ServerSlot {
  name: string;
  transport: string;
  connection?: ServerConnection;
  /** Set when the server could not even be configured (missing env var, ...). */
  configError?: string;
  registered: Map<string, Registered>;
  entries: ToolEntry[];
  skipped: McpToolError[];
}

const sameTool = (a: AnyAgentTool, b: AnyAgentTool) =>
  a.description === b.description &&
  a.risk === b.risk &&
  a.label === b.label &&
  JSON.stringify(a.parameters) === JSON.stringify(b.parameters);

/** Replaces a server's registered tools with `built`, touching only what changed. */
function syncTools(rein: Rein, slot: ServerSlot, tools: readonly AnyAgentTool[]): void {
  const wanted = new Map(tools.map((tool) => [tool.name, tool]));
  for (const [name, current] of slot.registered) {
    const next = wanted.get(name);
    if (next && sameTool(current.tool, next)) {
      wanted.delete(name);
      continue;
    }
    current.remove();
    slot.registered.delete(name);
  }
  for (const [name, tool] of wanted) slot.registered.set(name, { tool, remove: rein.registerTool(tool) });
}

function statusOf(slot: ServerSlot): McpServerStatus {
  const connection = slot.connection;
  const status: McpServerStatus = {
    name: slot.name,
    transport: slot.transport,
    // A server whose tools could not be registered (a name collision) is failed, whatever its connection.
    state: connection && slot.configError === undefined ? connection.state : "failed",
    restarts: connection?.restarts ?? 0,
    tools: slot.entries,
    skipped: slot.skipped.map((error) => ({ tool: error.tool ?? "?", reason: error.message })),
  };
  if (connection?.protocolVersion !== undefined) status.protocolVersion = connection.protocolVersion;
  const reason = slot.configError ?? connection?.reason;
  if (reason !== undefined) status.reason = reason;
  return status;
}

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  description: "MCP servers' tools as Rein tools (mcp__<server>__<tool>), behind Rein's gates.",
  options: mcpOptionsSchema,
  async setup(rein, options) {
    const slots: ServerSlot[] = [];
    const record = () =>
      rein.session.append({
        type: "custom",
        customType: MCP_STATUS_ENTRY,
        data: { servers: slots.map(statusOf) },
      });
    const log = (level: "info" | "warn" | "error", message: string) => rein.logger[level](message);

    for (const [name, serverOptions] of Object.entries(options.servers)) {
      checkServerName(name);
      // Described from the raw entry, so a server that fails to resolve still says what it is.
      const transport = serverOptions.url
        ? `http ${URL.canParse(serverOptions.url) ? new URL(serverOptions.url).origin + new URL(serverOptions.url).pathname : "(invalid url)"}`
        : `stdio ${[serverOptions.command ?? "", ...(serverOptions.args ?? [])].join(" ")}`;
      const slot: ServerSlot = { name, transport, registered: new Map(), entries: [], skipped: [] };
      slots.push(slot);
      let spec: ReturnType<typeof resolveServer>;
      try {
        spec = resolveServer(name, serverOptions, {
          cwd: rein.config.cwd,
          callTimeoutMs: options.callTimeoutMs,
          startTimeoutMs: options.startTimeoutMs,
        });
      } catch (error) {
        // A malformed entry is a config error; only a missing environment variable is the machine's state.
        if (serverOptions.required || !isMcpToolError(error, McpErrorCode.missingEnv)) throw error;
        slot.configError = describeError(error);
        log("warn", slot.configError);
        continue;
      }
      slot.transport = describeTransport(spec.transport);
      slot.connection = new ServerConnection(
        spec,
        {
          onTools: () => {
            if (!slot.connection || slot.connection.state === "closed") return;
            apply(slot);
            record();
          },
          log,
        },
        { name: "rein", version: PLUGIN_VERSION },
      );
    }

    const apply = (slot: ServerSlot) => {
      const connection = slot.connection as ServerConnection;
      try {
        const built = buildTools(connection, {
          protectedFiles: protectedFiles(rein),
          traceparentFor: (toolCallId) => traceContext(rein).traceparentFor(toolCallId),
        });
        slot.entries = built.entries;
        slot.skipped = built.skipped;
        for (const skipped of built.skipped) log("warn", skipped.message);
        syncTools(rein, slot, built.tools);
        slot.configError = undefined;
      } catch (error) {
        // A name collision: no tools from this server rather than a guess at which one is meant.
        slot.configError = describeError(error);
        slot.entries = [];
        syncTools(rein, slot, []);
        log("error", slot.configError);
        if (connection.spec.required) throw error;
      }
    };

    const cleanup = async () => {
      await Promise.all(slots.map((slot) => slot.connection?.close()));
    };
    rein.onDispose(cleanup);

    await Promise.all(
      slots.map(async (slot) => {
        const connection = slot.connection;
        if (!connection) return;
        try {
          await connection.start();
        } catch (error) {
          if (connection.spec.required) throw error;
          log("warn", describeError(error));
          return;
        }
        apply(slot);
      }),
    );
    record();
  },
});
