/**
 * MCP `tools/call` results to Rein tool results (pi-ai content).
 *
 * Invariant: every MCP content block becomes something the model can read, and
 * nothing is dropped silently: text stays text; images become `ImageContent`;
 * embedded text resources become text headed by their URI; an embedded image
 * blob becomes an image; other blobs, audio and resource links become a one-line
 * note saying what was there. `structuredContent` without any content is given
 * as JSON text. `isError` is kept.
 */
import type { ImageContent, TextContent, ToolResult } from "@rein/sdk";

/** The parts of an MCP `CallToolResult` this module reads (the SDK's type, loosely). */
export interface McpCallResult {
  content?: readonly McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

type McpContent = { type: string; [key: string]: unknown };

export interface McpToolDetails {
  server: string;
  tool: string;
  structuredContent?: unknown;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

const approxBytes = (base64: string) => Math.floor((base64.length * 3) / 4);

function blockToContent(block: McpContent): TextContent | ImageContent {
  switch (block.type) {
    case "text":
      return { type: "text", text: str(block.text) ?? "" };
    case "image": {
      const data = str(block.data);
      const mimeType = str(block.mimeType);
      if (data && mimeType) return { type: "image", data, mimeType };
      return { type: "text", text: "[image without data or MIME type]" };
    }
    case "audio":
      return {
        type: "text",
        text: `[audio ${str(block.mimeType) ?? "unknown type"}, ${approxBytes(str(block.data) ?? "")} bytes, not shown]`,
      };
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const uri = str(resource.uri) ?? "(no uri)";
      const mimeType = str(resource.mimeType);
      const text = str(resource.text);
      if (text !== undefined) return { type: "text", text: `[resource ${uri}]\n${text}` };
      const blob = str(resource.blob);
      if (blob && mimeType?.startsWith("image/")) return { type: "image", data: blob, mimeType };
      return {
        type: "text",
        text: `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}, ${approxBytes(blob ?? "")} bytes of binary data, not shown]`,
      };
    }
    case "resource_link": {
      const name = str(block.name);
      const description = str(block.description);
      return {
        type: "text",
        text: `[resource link ${str(block.uri) ?? "(no uri)"}${name ? ` "${name}"` : ""}${description ? `: ${description}` : ""}]`,
      };
    }
    default:
      return { type: "text", text: `[unsupported MCP content of type ${JSON.stringify(block.type)}]` };
  }
}

export function toToolResult(
  server: string,
  tool: string,
  result: McpCallResult,
): ToolResult<McpToolDetails> {
  const details: McpToolDetails = { server, tool };
  if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
  let content = (result.content ?? []).map(blockToContent);
  if (content.length === 0 && result.structuredContent !== undefined) {
    content = [{ type: "text", text: JSON.stringify(result.structuredContent, null, 2) }];
  } else if (content.length === 0 && result.toolResult !== undefined) {
    // Protocol 2024-10-07 servers answer with `toolResult`.
    content = [{ type: "text", text: JSON.stringify(result.toolResult, null, 2) }];
  }
  if (content.length === 0) content = [{ type: "text", text: "(no output)" }];
  return { content, details, isError: result.isError === true };
}
