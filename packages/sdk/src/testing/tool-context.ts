/**
 * `toolContext()`: the second argument of a tool's `execute`, for unit tests that
 * call a tool directly. Invariant: every field a run provides is present (signal,
 * update, cwd, sessionId, toolCallId, frozen facts), so a test cannot pass against
 * a context a real run would never give; progress updates are kept for assertions.
 */
import type { ToolCallFacts, ToolExecutionContext, ToolResult } from "@rein/harness";

export interface ToolContextOptions {
  /** Working directory the tool resolves paths against. Default: `process.cwd()`. */
  cwd?: string;
  sessionId?: string;
  toolCallId?: string;
  /** The facts the gates would have decided on (what the tool's `inspect` returns). Default `{}`. */
  facts?: ToolCallFacts;
  /** Use this signal instead of the context's own (which `abort()` aborts). */
  signal?: AbortSignal;
}

export interface TestToolContext extends ToolExecutionContext {
  /** Every `update(...)` the tool reported, in order. */
  readonly updates: ToolResult[];
  /** Aborts the context's own signal, as a user's Ctrl-C would. */
  abort(reason?: unknown): void;
}

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
};

export function toolContext(options: ToolContextOptions = {}): TestToolContext {
  const controller = new AbortController();
  const updates: ToolResult[] = [];
  return {
    signal: options.signal ?? controller.signal,
    update: (partial) => void updates.push(partial),
    cwd: options.cwd ?? process.cwd(),
    sessionId: options.sessionId ?? "test-session",
    toolCallId: options.toolCallId ?? "test-call",
    facts: deepFreeze(structuredClone(options.facts ?? {})),
    updates,
    abort: (reason) => controller.abort(reason),
  };
}
