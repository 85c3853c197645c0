/**
 * Model failures on stderr, once each. A request that fails and is retried by the
 * harness emits a closed error message per attempt, then a `retry` event; printing
 * each would show one outage up to four times. Invariant: the first retry of a
 * request is announced once (error, endpoint, attempt counts); later retries of
 * the same error are silent; the final failure is printed once, with the endpoint
 * and how many attempts were made.
 */
import type { HarnessEvent } from "@rein/harness";
import type { Terminal } from "./terminal.js";

export interface ModelFailures {
  observe(event: HarnessEvent): void;
  /** Prints a failure still waiting to learn whether a retry follows. */
  flush(): void;
}

export function modelFailures(term: Terminal, endpoint: string | undefined): ModelFailures {
  const { c } = term;
  const from = endpoint ? ` from ${endpoint}` : "";
  /** The error message of an attempt that may yet be retried. */
  let pending: string | undefined;
  /** Attempts made for the current request, once it has been retried. */
  let attempts = 1;
  let announced: string | undefined;

  const flush = () => {
    if (pending === undefined) return;
    const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
    term.err.write(`${c.red("✗ model error")}${from}${tries}: ${pending}\n`);
    pending = undefined;
  };
  return {
    flush,
    observe(event) {
      if (event.type === "retry") {
        if (event.operation !== "request") return;
        attempts = event.attempt;
        const error = pending ?? event.errorMessage;
        pending = undefined;
        if (announced === error) return;
        announced = error;
        const seconds = (event.delayMs / 1000).toFixed(1);
        term.err.write(
          `${c.yellow("↻ model request failed")}${from}: ${error}; retrying (attempt ${event.attempt} of ${event.maxAttempts} in ${seconds}s)\n`,
        );
        return;
      }
      if (event.type === "message_start") return; // the next attempt starts: still the same request
      if (event.type === "message_end" && event.message.role === "assistant") {
        flush();
        if (event.message.stopReason === "error") {
          pending = event.message.errorMessage ?? "unknown";
          return;
        }
        attempts = 1;
        announced = undefined;
        return;
      }
      if (event.type === "message_update") return;
      flush();
      if (event.type === "turn_start" || event.type === "agent_start") {
        attempts = 1;
        announced = undefined;
      }
    },
  };
}
