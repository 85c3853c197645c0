/**
 * Which browser origins may reach `rein mcp serve --http` (the Streamable HTTP
 * transport requires servers to validate `Origin` against DNS rebinding).
 *
 * Invariants: a request without `Origin` is a non-browser client and passes (the
 * bearer token still applies); a loopback origin (`http(s)://localhost`,
 * `127.0.0.1` or `[::1]`, any port) passes, as the MCP SDK's own localhost
 * defaults do; a listed origin passes on an exact `scheme://host[:port]` match;
 * everything else is refused, including `null`, values with a path or
 * credentials, and schemes other than http and https (deny when unsure).
 */

const LOOPBACK_ORIGIN_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** What an allowed origin's responses carry, so a browser client can use them. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
  "access-control-allow-headers":
    "authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name",
  "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate",
  "access-control-max-age": "600",
  vary: "Origin",
};

/**
 * The origin an `Origin` value names (`scheme://host[:port]`, http or https), or
 * undefined when the value is anything else: `null`, a path, credentials, another
 * scheme, a default port spelled out. Browsers send exactly the serialised origin.
 */
export function normalOrigin(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  return value.toLowerCase() === url.origin ? url.origin : undefined;
}

/** Whether the request's Origin may reach the server: `true`, `false`, or `"none"` when it sent none. */
export function originAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean | "none" {
  if (header === undefined) return "none";
  const origin = normalOrigin(header);
  if (origin === undefined) return false;
  if (LOOPBACK_ORIGIN_HOSTS.has(new URL(origin).hostname)) return true;
  return allowed.has(origin);
}
