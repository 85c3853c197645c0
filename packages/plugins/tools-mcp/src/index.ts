/**
 * @rein/tools-mcp: Model Context Protocol servers as Rein tools. The default
 * export is the plugin; the rest is for hosts and tools (`rein tools`, `rein
 * doctor`, `rein mcp serve`) and for tests. See README.md.
 */
export {
  type CallOptions,
  type ConnectionEvents,
  type McpToolInfo,
  ServerConnection,
  type ServerState,
} from "./connection.js";
export { type McpCallResult, type McpToolDetails, toToolResult } from "./content.js";
export { isMcpToolError, McpErrorCode, McpToolError } from "./errors.js";
export { reinToolName, reinToolNames, SERVER_NAME_PATTERN } from "./names.js";
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_START_TIMEOUT_MS,
  type McpOptions,
  mcpOptionsSchema,
  type ProtocolChoice,
  resolveServer,
  type ServerOptions,
  type ServerSpec,
  type ServerTransport,
  serverOptionsSchema,
} from "./options.js";
export { default, PLUGIN_NAME } from "./plugin.js";
export { riskFromAnnotations, type ToolAnnotations } from "./risk.js";
export { MCP_STATUS_ENTRY, type McpServerStatus, type McpStatus, readMcpStatus } from "./status.js";
export { type BuiltTools, buildTools, type ToolEntry } from "./tools.js";
