/**
 * Shows a run in the terminal: the streamed answer on stdout; tool activity,
 * decisions, a spinner while waiting and errors on stderr (or, with `--json`,
 * every event as one JSON line on stdout). Observation only.
 */
import type { AgentHarness, HarnessEvent } from "@rein/harness";
import yoctoSpinner from "yocto-spinner";
import type { JsonOut } from "./json-stdout.js";
import { modelFailures } from "./model-failures.js";
import { shorten, type Terminal } from "./terminal.js";

export interface RendererOptions {
  /** Print every event as one JSON line here instead of rendering it. */
  json?: JsonOut | undefined;
  /** Where model requests go (base URL), named in model errors and retry notices. */
  endpoint?: string | undefined;
  /** Where the streamed answer goes (default stdout; `--output-schema` keeps stdout for the checked JSON). */
  answerTo?: NodeJS.WritableStream | undefined;
}

export function attachRenderer(harness: AgentHarness, term: Terminal, options: RendererOptions): () => void {
  const { json } = options;
  if (json) {
    return harness.subscribe(
      (event) => {
        json.write(`${JSON.stringify(event)}\n`);
      },
      { owner: "rein-cli" },
    );
  }
  const { c } = term;
  const failures = modelFailures(term, options.endpoint);
  const spinner = term.interactive ? yoctoSpinner({ stream: term.err, text: "thinking" }) : undefined;
  const answer = options.answerTo ?? term.out;
  let answerOpen = false;
  // A denied call's error result repeats the decision line: show the decision once.
  const denied = new Set<string>();
  const stopSpinner = () => {
    if (spinner?.isSpinning) spinner.stop();
  };
  const endAnswer = () => {
    if (answerOpen) answer.write("\n");
    answerOpen = false;
  };
  const announced = new Set<string>();
  const announceCall = (call: { toolCallId: string; toolName: string; args: unknown }) => {
    if (announced.has(call.toolCallId)) return;
    announced.add(call.toolCallId);
    stopSpinner();
    endAnswer();
    term.err.write(`${c.cyan("→")} ${c.bold(call.toolName)} ${c.dim(shorten(call.args, 100))}\n`);
  };
  const render = (event: HarnessEvent) => {
    failures.observe(event);
    switch (event.type) {
      case "turn_start":
        spinner?.start("thinking");
        break;
      case "message_update":
        if (event.delta.type === "text_delta" && event.delta.delta) {
          stopSpinner();
          answer.write(event.delta.delta);
          answerOpen = true;
        }
        break;
      case "message_end":
        if (event.message.role === "assistant") {
          stopSpinner();
          endAnswer();
          if (event.message.stopReason === "aborted") term.err.write(`${c.yellow("■ aborted")}\n`);
        }
        break;
      case "tool_execution_start":
        announceCall(event);
        break;
      case "tool_decision":
        // Whichever comes first (a denied call may never start), the call's line is shown once, before its decision.
        announceCall(event);
        if (event.decision === "deny") {
          denied.add(event.toolCallId);
          term.err.write(`  ${c.red("✗ denied")} by ${c.bold(event.by)}: ${event.reason}\n`);
        } else if (event.askedBy) {
          term.err.write(`  ${c.green("✓ allowed")} by ${c.bold(event.by)} (asked by ${event.askedBy})\n`);
        }
        break;
      case "tool_execution_update":
        if (spinner) spinner.text = `${event.toolName}…`;
        break;
      case "tool_execution_end": {
        announced.delete(event.toolCallId);
        if (denied.delete(event.toolCallId)) {
          spinner?.start("thinking");
          break;
        }
        const first = event.result.content.find((block) => block.type === "text");
        const summary = first?.type === "text" ? shorten(first.text, 100) : "";
        if (event.isError) term.err.write(`  ${c.red("✗")} ${c.dim(summary)}\n`);
        else term.err.write(`  ${c.green("✓")} ${c.dim(summary)}\n`);
        spinner?.start("thinking");
        break;
      }
      case "plugin_error":
        term.err.write(
          `${c.yellow("! plugin")} ${c.bold(event.plugin)} ${c.yellow(`failed in ${event.hook}:`)} ${event.message}\n`,
        );
        break;
      case "retry":
        if (spinner) spinner.text = `retrying (attempt ${event.attempt}/${event.maxAttempts})`;
        break;
      case "agent_end":
        stopSpinner();
        endAnswer();
        break;
      case "child_event": {
        // A child agent's decisions, one line each, under the `task` call that runs it.
        const inner = event.event;
        if (inner.type !== "tool_decision") break;
        stopSpinner();
        endAnswer();
        const verdict = inner.decision === "deny" ? c.red("✗ denied") : c.green("✓ allowed");
        term.err.write(
          `  ${c.dim("│")} ${c.bold(inner.toolName)} ${c.dim(shorten(inner.args, 60))} ${verdict} by ${c.bold(inner.by)}${inner.decision === "deny" ? `: ${inner.reason}` : ""}\n`,
        );
        break;
      }
      default:
        break;
    }
  };
  const unsubscribe = harness.subscribe(render, { owner: "rein-cli" });
  return () => {
    stopSpinner();
    failures.flush();
    unsubscribe();
  };
}
