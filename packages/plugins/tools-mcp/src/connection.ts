/**
 * One MCP server: its connection, its tool list, restarts and calls.
 *
 * Invariants:
 * - `start()` connects and lists tools within `startTimeoutMs` or leaves the
 *   server `failed` with a reason that names it (exit code and stderr tail for a
 *   stdio server); a failed first start is not retried (the config is at fault).
 * - A server that was ready and then dropped (crash, closed stream) is restarted
 *   with exponential backoff (250 ms doubling to 30 s; the count resets once a
 *   connection has stayed up for 30 s). Calls made meanwhile wait for it within
 *   their own timeout; a call in flight when it dropped fails (it is not retried:
 *   the tool may have had effects).
 * - `tools/list_changed` re-lists the tools (one listing at a time) and reports
 *   the new list through `onTools`; so does a restart whose list differs. A call
 *   returns only after a listing its server announced before answering is done,
 *   so a tool that changes the tool set is followed by a turn that sees it.
 * - `close()` is final: no restart after it, and a stdio server's whole process
 *   group is gone when it resolves.
 */
import {
  Client,
  type ClientOptions,
  type PriorDiscovery,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from "@modelcontextprotocol/client";
import type { McpCallResult } from "./content.js";
import { callFailed, callTimeout, describeError, startFailed, unavailable } from "./errors.js";
import type { ProtocolChoice, ServerSpec } from "./options.js";
import type { ToolAnnotations } from "./risk.js";
import { ProcessGroupStdioTransport } from "./stdio-transport.js";

export type ServerState = "starting" | "ready" | "restarting" | "failed" | "closed";

/** A tool as the server lists it (the fields Rein uses). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

export interface ConnectionEvents {
  /** The server's tool list changed (after list_changed or a restart). */
  onTools(tools: readonly McpToolInfo[]): void;
  /** A line worth logging (restarts, failures). */
  log(level: "info" | "warn" | "error", message: string): void;
}

export interface CallOptions {
  signal: AbortSignal;
  /** W3C trace context of the calling span, sent as `params._meta.traceparent`. */
  traceparent?: string;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 30_000;
const STABLE_MS = 30_000;

/** `HTTP 401` for the SDK's Streamable HTTP errors, which carry the response status. */
function httpStatusOf(error: unknown): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof SdkHttpError) return `HTTP ${cause.status}`;
  }
  return "";
}

/** The newest protocol revision Rein speaks; older peers get 2025-11-25 (and what they counter-offer). */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";
/** How long a stdio server may stay silent on the `server/discover` probe before it counts as a 2025-era server. */
const STDIO_PROBE_MS = 5_000;

/** The client's version negotiation for the server's `protocol` option. */
export function negotiationFor(
  protocol: ProtocolChoice,
  stdio: boolean,
  startTimeoutMs: number,
): ClientOptions {
  if (protocol === "2025-11-25") {
    // The 2025 `initialize` handshake only, never a probe: for peers that choke on `server/discover`.
    return {
      versionNegotiation: { mode: "legacy" },
      supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    };
  }
  if (protocol === MODERN_PROTOCOL_VERSION)
    return { versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } };
  return {
    versionNegotiation: {
      mode: "auto",
      probe: { timeoutMs: stdio ? Math.min(STDIO_PROBE_MS, startTimeoutMs) : startTimeoutMs },
    },
  };
}

const sameTools = (a: readonly McpToolInfo[], b: readonly McpToolInfo[]) =>
  JSON.stringify(a) === JSON.stringify(b);

export class ServerConnection {
  state: ServerState = "starting";
  /** Why the server is failed or restarting. */
  reason: string | undefined;
  tools: readonly McpToolInfo[] = [];
  restarts = 0;
  /** The protocol revision of the current (or last) connection, e.g. `2026-07-28` or `2025-11-25`. */
  protocolVersion: string | undefined;
  /** What the first connection learnt of the server's era: restarts reuse it instead of probing again. */
  private prior: PriorDiscovery | undefined;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private readyWaiters: (() => void)[] = [];
  private attempts = 0;
  private connectedAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private listing: Promise<void> = Promise.resolve();
  /** Listings announced and not yet finished (a call waits for them before returning). */
  private relisting = 0;

  constructor(
    readonly spec: ServerSpec,
    private readonly events: ConnectionEvents,
    private readonly clientInfo: { name: string; version: string },
  ) {}

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.transport instanceof ProcessGroupStdioTransport ? this.transport.pid : undefined;
  }

  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      this.state = "failed";
      this.reason = describeError(error);
      throw error;
    }
  }

  private makeTransport(): Transport {
    const { transport } = this.spec;
    if (transport.kind === "stdio")
      return new ProcessGroupStdioTransport({ ...transport, id: `mcp-${this.spec.name}` });
    return new StreamableHTTPClientTransport(transport.url, { requestInit: { headers: transport.headers } });
  }

  private newClient(): Client {
    const client: Client = new Client(this.clientInfo, {
      capabilities: {},
      ...negotiationFor(this.spec.protocol, this.spec.transport.kind === "stdio", this.spec.startTimeoutMs),
      // Both eras: an unsolicited notification (2025) or the `subscriptions/listen` stream the SDK
      // opens on a 2026-07-28 connection. No debounce: a call waits for the listing its server announced.
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.relist(client) },
      },
    });
    return client;
  }

  /**
   * Connects with the configured negotiation; `started` receives each transport it
   * starts (for error details and teardown). A stdio server that exits during the
   * `server/discover` probe (some SDKs end on any request before `initialize`) is a
   * 2025-era server: it is started once more, with the 2025 handshake only.
   */
  private async connectClient(timeout: number, started: Transport[]): Promise<Client> {
    const client = this.newClient();
    const transport = this.makeTransport();
    started.push(transport);
    const probing = this.spec.protocol === "auto" && this.prior === undefined;
    try {
      await client.connect(transport, { timeout, ...(this.prior ? { prior: this.prior } : {}) });
      return client;
    } catch (error) {
      // Whether the server itself ended (before we close anything, which would end it too).
      const hungUp = transport instanceof ProcessGroupStdioTransport && transport.exit !== undefined;
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      if (!(probing && hungUp && started.length === 1 && this.state !== "closed")) throw error;
      this.prior = { kind: "legacy" };
      return this.connectClient(timeout, started);
    }
  }

  /** Connects and lists tools within the start timeout; on failure everything started is torn down. */
  private async connect(): Promise<void> {
    const started: Transport[] = [];
    let client: Client | undefined;
    const timeout = this.spec.startTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${timeout} ms (option startTimeoutMs)`)),
        timeout,
      );
    });
    const connecting = (async () => {
      client = await this.connectClient(timeout, started);
      this.client = client;
      this.transport = started.at(-1);
      this.tools = await this.listAll(client, timeout);
      return client;
    })();
    let connected: Client;
    try {
      connected = await Promise.race([connecting, expired]);
    } catch (error) {
      this.client = undefined;
      this.transport = undefined;
      const teardown = async () => {
        await client?.close().catch(() => undefined);
        for (const transport of started) await transport.close().catch(() => undefined);
      };
      await teardown();
      // A connect still under way when the start timed out must not leave a process behind.
      void connecting.then(teardown, () => undefined);
      const last = started.at(-1);
      throw startFailed(this.spec.name, error, (last ? this.stderrOf(last) : "") || httpStatusOf(error));
    } finally {
      clearTimeout(timer);
    }
    const transport = started.at(-1) as Transport;
    if (this.state === "closed") {
      // Closed while starting (dispose during setup): nothing may outlive that.
      this.client = undefined;
      this.transport = undefined;
      await connected.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      throw startFailed(this.spec.name, new Error("shut down while starting"));
    }
    // Restarts skip the probe: the era is the server's, not the connection's.
    const discover = connected.getDiscoverResult();
    this.prior = discover ? { kind: "modern", discover } : { kind: "legacy" };
    this.protocolVersion = connected.getNegotiatedProtocolVersion();
    connected.onclose = () => this.dropped(connected);
    this.state = "ready";
    this.reason = undefined;
    this.connectedAt = Date.now();
    for (const wake of this.readyWaiters.splice(0)) wake();
  }

  private stderrOf(transport: Transport): string {
    if (!(transport instanceof ProcessGroupStdioTransport)) return "";
    const exit = transport.exit;
    const parts: string[] = [];
    if (exit) parts.push(`exited with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}`);
    const tail = transport.stderr.trim();
    if (tail) parts.push(`stderr: ${tail.split("\n").slice(-5).join(" | ")}`);
    return parts.join("; ");
  }

  private async listAll(client: Client, timeout: number): Promise<McpToolInfo[]> {
    // Without a cursor the SDK walks every page (and keeps the list for callTool's output checks).
    const { tools } = await client.listTools(undefined, { timeout, cacheMode: "refresh" });
    return tools as McpToolInfo[];
  }

  private relist(client: Client): void {
    this.relisting += 1;
    this.listing = this.listing.then(async () => {
      try {
        if (this.client !== client) return;
        const tools = await this.listAll(client, this.spec.startTimeoutMs);
        if (this.client !== client || sameTools(tools, this.tools)) return;
        this.tools = tools;
        this.events.onTools(tools);
      } catch (error) {
        this.events.log(
          "warn",
          `mcp server "${this.spec.name}": listing tools after list_changed failed: ${describeError(error)}`,
        );
      } finally {
        this.relisting -= 1;
      }
    });
  }

  private dropped(client: Client): void {
    if (this.client !== client || this.state === "closed") return;
    const detail = this.transport ? this.stderrOf(this.transport) : "";
    this.client = undefined;
    this.transport = undefined;
    if (Date.now() - this.connectedAt >= STABLE_MS) this.attempts = 0;
    this.scheduleRestart(`the connection closed${detail ? ` (${detail})` : ""}`);
  }

  private scheduleRestart(reason: string): void {
    if (this.state === "closed") return;
    this.state = "restarting";
    this.reason = reason;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempts);
    this.attempts += 1;
    this.events.log("warn", `mcp server "${this.spec.name}": ${reason}; restarting in ${delay} ms`);
    this.restartTimer = setTimeout(() => void this.restart(), delay);
    this.restartTimer.unref();
  }

  private async restart(): Promise<void> {
    this.restartTimer = undefined;
    if (this.state === "closed") return;
    const before = this.tools;
    try {
      await this.connect();
    } catch (error) {
      // The server may have changed eras with the restart: probe again next time.
      this.prior = undefined;
      this.scheduleRestart(describeError(error));
      return;
    }
    if (this.state !== "ready") return;
    this.restarts += 1;
    this.events.log("info", `mcp server "${this.spec.name}" restarted`);
    if (!sameTools(before, this.tools)) this.events.onTools(this.tools);
  }

  /** Resolves when the server is ready, rejects when `signal` fires first or it is failed/closed. */
  private async whenReady(tool: string, signal: AbortSignal): Promise<Client> {
    for (;;) {
      if (this.state === "ready" && this.client) return this.client;
      if (this.state === "failed" || this.state === "closed") {
        throw unavailable(
          this.spec.name,
          tool,
          this.state === "closed" ? "it was shut down" : `${this.reason}`,
        );
      }
      if (signal.aborted)
        throw unavailable(this.spec.name, tool, `still ${this.state}: ${this.reason ?? ""}`);
      await new Promise<void>((wake) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          wake();
        };
        this.readyWaiters.push(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    const timeoutMs = this.spec.callTimeoutMs;
    const started = Date.now();
    let client = this.state === "ready" ? this.client : undefined;
    if (!client) {
      const deadline = AbortSignal.timeout(timeoutMs);
      client = await this.whenReady(tool, AbortSignal.any([options.signal, deadline])).catch((error) => {
        if (deadline.aborted && !options.signal.aborted) throw callTimeout(this.spec.name, tool, timeoutMs);
        throw error;
      });
    }
    // The SDK enforces the timeout (and sends notifications/cancelled on abort or timeout).
    const remaining = Math.max(1, timeoutMs - (Date.now() - started));
    // A signal of the call's own: the SDK leaves its abort listener on the signal it is
    // given, and the run's signal is shared by every call of the run.
    const own = new AbortController();
    const forward = () => own.abort(options.signal.reason);
    options.signal.addEventListener("abort", forward, { once: true });
    try {
      const result = (await client.callTool(
        {
          name: tool,
          arguments: args,
          ...(options.traceparent !== undefined ? { _meta: { traceparent: options.traceparent } } : {}),
        },
        {
          signal: own.signal,
          timeout: remaining,
          ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        },
      )) as McpCallResult;
      // A list_changed the server sent before its answer is applied before the
      // result is returned, so the very next turn sees the new tool set.
      if (this.relisting > 0) await this.listing;
      return result;
    } catch (error) {
      if (options.signal.aborted) throw error;
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
        throw callTimeout(this.spec.name, tool, timeoutMs);
      }
      throw callFailed(this.spec.name, tool, error);
    } finally {
      options.signal.removeEventListener("abort", forward);
    }
  }

  async close(): Promise<void> {
    this.state = "closed";
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const wake of this.readyWaiters.splice(0)) wake();
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    if (transport instanceof StreamableHTTPClientTransport)
      await transport.terminateSession().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
    await this.listing.catch(() => undefined);
  }
}
