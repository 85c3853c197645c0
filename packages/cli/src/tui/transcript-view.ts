/**
 * The run as it happens, as pi-tui components: each prompt, the answer as
 * Markdown re-rendered on every streamed delta, each tool call as a ToolBlock
 * (with the diff of an edit or write), plugin failures, retries and aborts.
 * Observation only, like ui/run-renderer.ts, which stays the plain renderer.
 */
import { Container, Markdown, Spacer, Text } from "@earendil-works/pi-tui";
import type { AgentHarness, HarnessEvent } from "@rein/harness";
import type { Colors } from "../ui/terminal.js";
import { editedFile, fileDiff, snapshot } from "./file-diff.js";
import { markdownTheme } from "./theme.js";
import { ToolBlock } from "./tool-block.js";

export class TranscriptView extends Container {
  private answer: Markdown | undefined;
  private answerText = "";
  private readonly blocks = new Map<string, ToolBlock>();
  private readonly all: ToolBlock[] = [];
  private readonly before = new Map<string, { file: string; text: string | null }>();
  private expanded = false;

  constructor(
    private readonly harness: AgentHarness,
    private readonly cwd: string,
    private readonly c: Colors,
    private readonly changed: () => void,
  ) {
    super();
  }

  /** A line the person typed (a prompt or a command), as sent. */
  prompt(text: string): void {
    this.endAnswer();
    this.addChild(new Spacer(1));
    const lines = text
      .split("\n")
      .map((line, i) => `${i === 0 ? this.c.bold(this.c.cyan("› ")) : "  "}${line}`);
    this.addChild(new Text(lines.join("\n"), 0, 0));
    this.changed();
  }

  /** A notice from Rein itself (a command's output, an error). */
  notice(text: string): void {
    this.endAnswer();
    const trimmed = text.replace(/\n+$/, "");
    if (trimmed !== "") this.addChild(new Text(trimmed, 0, 0));
    this.changed();
  }

  /** Ctrl-O: every tool block, collapsed or expanded. */
  toggleExpanded(): void {
    this.expanded = !this.expanded;
    for (const block of this.all) block.expanded = this.expanded;
    this.invalidate();
    this.changed();
  }

  private endAnswer(): void {
    this.answer = undefined;
    this.answerText = "";
  }

  private block(event: { toolCallId: string; toolName: string; args: unknown }): ToolBlock {
    let block = this.blocks.get(event.toolCallId);
    if (!block) {
      this.endAnswer();
      block = new ToolBlock(event.toolName, event.args, this.c);
      block.expanded = this.expanded;
      this.blocks.set(event.toolCallId, block);
      this.all.push(block);
      this.addChild(block);
    }
    return block;
  }

  private isEdit(name: string): boolean {
    return this.harness.tools.find((tool) => tool.name === name)?.risk === "write";
  }

  readonly observe = (event: HarnessEvent): void => {
    const { c } = this;
    switch (event.type) {
      case "message_update":
        if (event.delta.type === "text_delta" && event.delta.delta) {
          if (!this.answer) {
            this.answer = new Markdown("", 0, 0, markdownTheme(c));
            this.addChild(new Spacer(1));
            this.addChild(this.answer);
          }
          this.answerText += event.delta.delta;
          this.answer.setText(this.answerText);
        }
        break;
      case "message_end":
        if (event.message.role === "assistant") {
          this.endAnswer();
          if (event.message.stopReason === "aborted") this.notice(c.yellow("■ aborted"));
          else if (event.message.stopReason === "error")
            this.notice(`${c.red("✗")} ${event.message.errorMessage ?? "the model request failed"}`);
        }
        break;
      case "tool_decision": {
        const block = this.block(event);
        if (event.decision === "deny") {
          block.denied();
          block.note(`${c.red("✗ denied")} by ${c.bold(event.by)}: ${event.reason}`);
        } else if (event.askedBy) {
          block.note(`${c.green("✓ allowed")} by ${c.bold(event.by)} (asked by ${event.askedBy})`);
        }
        break;
      }
      case "tool_execution_start": {
        this.block(event);
        const file = this.isEdit(event.toolName) ? editedFile(event.args, this.cwd) : undefined;
        const text = file === undefined ? undefined : snapshot(file);
        if (file !== undefined && text !== undefined) this.before.set(event.toolCallId, { file, text });
        break;
      }
      case "tool_execution_end": {
        const block = this.block({ ...event, args: {} });
        const text = event.result.content
          .map((part) => (part.type === "text" ? part.text : `[${part.type}]`))
          .join("\n");
        block.finish(text, event.isError);
        const before = this.before.get(event.toolCallId);
        this.before.delete(event.toolCallId);
        if (before && !event.isError) {
          const after = snapshot(before.file);
          if (after !== undefined) block.showDiff(fileDiff(before.file, this.cwd, before.text, after, c));
        }
        break;
      }
      case "plugin_error":
        this.notice(
          `${c.yellow("! plugin")} ${c.bold(event.plugin)} ${c.yellow(`failed in ${event.hook}:`)} ${event.message}`,
        );
        break;
      case "retry":
        this.notice(c.yellow(`↻ retrying (attempt ${event.attempt}/${event.maxAttempts})`));
        break;
      default:
        return;
    }
    this.changed();
  };
}
