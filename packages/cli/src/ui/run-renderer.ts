/**
 * Shows a run in the terminal: the streamed answer on stdout; tool activity,
 * decisions, a spinner while waiting and errors on stderr (or, with `--json`,
 * every event as one JSON line on stdout). Observation only.
 */
import type { AgentHarness, HarnessEvent } from "@rein/harness";
import yoctoSpinner from "yocto-spinner";
import { shorten, type Terminal } from "./terminal.js";

export interface RendererOptions {
  json: boolean;
}

export function attachRenderer(harness: AgentHarness, term: Terminal, options: RendererOptions): () => void {
  if (options.json) {
    return harness.subscribe(
      (event) => {
        term.out.write(`${JSON.stringify(event)}\n`);
      },
      { owner: "rein-cli" },
    );
  }
  const { c } = term;
  const spinner = term.interactive ? yoctoSpinner({ stream: term.err, text: "thinking" }) : undefined;
  let answerOpen = false;
  const stopSpinner = () => {
    if (spinner?.isSpinning) spinner.stop();
  };
  const endAnswer = () => {
    if (answerOpen) term.out.write("\n");
    answerOpen = false;
  };
  const header = (toolName: string, args: unknown) =>
    term.err.write(`${c.cyan("→")} ${c.bold(toolName)} ${c.dim(shorten(args, 100))}\n`);
  /** Calls whose header a decision line already printed. */
  const announced = new Set<string>();
  const render = (event: HarnessEvent) => {
    switch (event.type) {
      case "turn_start":
        spinner?.start("thinking");
        break;
      case "message_update":
        if (event.delta.type === "text_delta" && event.delta.delta) {
          stopSpinner();
          term.out.write(event.delta.delta);
          answerOpen = true;
        }
        break;
      case "message_end":
        if (event.message.role === "assistant") {
          stopSpinner();
          endAnswer();
          if (event.message.stopReason === "error")
            term.err.write(`${c.red("✗ model error:")} ${event.message.errorMessage ?? "unknown"}\n`);
          if (event.message.stopReason === "aborted") term.err.write(`${c.yellow("■ aborted")}\n`);
        }
        break;
      case "tool_execution_start":
        stopSpinner();
        endAnswer();
        if (!announced.delete(event.toolCallId)) header(event.toolName, event.args);
        break;
      case "tool_decision":
        // The decision comes before the call starts (a denied call never starts): name the call here.
        if (event.decision === "deny") {
          stopSpinner();
          endAnswer();
          header(event.toolName, event.args);
          term.err.write(`  ${c.red("✗ denied")} by ${c.bold(event.by)}: ${event.reason}\n`);
        } else if (event.askedBy) {
          stopSpinner();
          endAnswer();
          header(event.toolName, event.args);
          announced.add(event.toolCallId);
          term.err.write(`  ${c.green("✓ allowed")} by ${c.bold(event.by)} (asked by ${event.askedBy})\n`);
        }
        break;
      case "tool_execution_update":
        if (spinner) spinner.text = `${event.toolName}…`;
        break;
      case "tool_execution_end": {
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
      case "agent_end":
        stopSpinner();
        endAnswer();
        break;
      default:
        break;
    }
  };
  const unsubscribe = harness.subscribe(render, { owner: "rein-cli" });
  return () => {
    stopSpinner();
    unsubscribe();
  };
}
