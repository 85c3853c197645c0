/**
 * One tool call in the transcript: its line (`→ name args`), the gate's decision
 * when someone asked or denied, the diff of an edit or write, and its output,
 * collapsed to a few lines until expanded (Ctrl-O toggles every block).
 */
import { type Component, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Colors } from "../ui/terminal.js";

/** Output lines a collapsed block shows. */
export const COLLAPSED_LINES = 4;

export class ToolBlock implements Component {
  private readonly notes: string[] = [];
  private diff: string[] = [];
  private output: string[] = [];
  private state: "running" | "ok" | "error" | "denied" = "running";
  expanded = false;

  constructor(
    private readonly name: string,
    private readonly args: unknown,
    private readonly c: Colors,
  ) {}

  note(line: string): void {
    this.notes.push(line);
  }
  denied(): void {
    this.state = "denied";
  }
  showDiff(lines: string[]): void {
    this.diff = lines;
  }
  finish(text: string, isError: boolean): void {
    if (this.state !== "denied") this.state = isError ? "error" : "ok";
    this.output = text === "" ? [] : text.replace(/\n+$/, "").split("\n");
  }

  invalidate(): void {}

  render(width: number): string[] {
    const { c } = this;
    const mark = this.state === "running" ? c.cyan("→") : this.state === "ok" ? c.green("✓") : c.red("✗");
    const args = JSON.stringify(this.args) ?? "";
    const lines = [truncateToWidth(`${mark} ${c.bold(this.name)} ${c.dim(args)}`, width)];
    for (const note of this.notes) lines.push(...wrapTextWithAnsi(`  ${note}`, width));
    for (const line of this.diff) lines.push(truncateToWidth(`  ${line}`, width));
    if (this.state === "denied") return lines;
    const shown = this.expanded ? this.output : this.output.slice(0, COLLAPSED_LINES);
    const colour = this.state === "error" ? c.red : c.dim;
    for (const line of shown) {
      const text = `  ${colour(line)}`;
      if (this.expanded) lines.push(...wrapTextWithAnsi(text, width));
      else lines.push(truncateToWidth(text, width));
    }
    const hidden = this.output.length - shown.length;
    if (hidden > 0) lines.push(c.dim(`  … ${hidden} more line${hidden === 1 ? "" : "s"} (ctrl+o expands)`));
    return lines;
  }
}
