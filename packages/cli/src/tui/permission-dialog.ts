/**
 * The permission dialog: @rein/plugin-permissions asks through the host prompt IO
 * the terminal UI installs (`setHostPromptIO`), so its grants, signatures and
 * modes stay the plugin's, and the UI only shows the question and types the
 * answer. The dialog shows the call, the facts the gates decided on (the parsed
 * shell command, canonical paths, the sandbox), who asks and why, and each grant
 * scope on a line of its own. Keys: y / s / a / n (Esc and Enter deny, as an
 * empty answer does at the plain prompt).
 */
import { EventEmitter } from "node:events";
import { type Component, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { PermissionRequest } from "@rein/harness";
import type { PromptIO } from "@rein/plugin-permissions";
import type { Colors } from "../ui/terminal.js";

interface Choice {
  key: string;
  label: string;
}

/** The `[y] …   [s] …   [n] …` line of the plugin's prompt text, one choice each. */
export function choicesOf(text: string): Choice[] {
  const line = text.split("\n").find((l) => l.trimStart().startsWith("[y]")) ?? "";
  return [...line.matchAll(/\[(\w)\] (.*?)(?=\s{3,}\[\w\] |$)/g)].map((m) => ({
    key: m[1] as string,
    label: (m[2] as string).trim(),
  }));
}

type Facts = Record<string, unknown>;

/** The dialog's rows: label and text. */
export function dialogRows(request: PermissionRequest, mask: (text: string) => string): [string, string][] {
  const { call, verdict } = request;
  const rows: [string, string][] = [["call", mask(`${call.name} ${JSON.stringify(call.args)}`)]];
  const facts = (call.facts ?? {}) as Facts;
  const command = facts.command as
    | { commands?: { argv: string[]; wrappers?: string[] }[]; unknown?: { reason: string }[] }
    | undefined;
  if (command?.commands) {
    const simple = command.commands.map((cmd) =>
      [...(cmd.wrappers ?? []), ...cmd.argv]
        .map((word) => (/[\s"']/.test(word) ? JSON.stringify(word) : word))
        .join(" "),
    );
    rows.push(["command", mask(simple.join("  ·  ") || "(no simple command)")]);
    if (command.unknown && command.unknown.length > 0)
      rows.push(["not understood", mask(command.unknown.map((u) => u.reason).join("; "))]);
  }
  for (const key of ["paths", "mentionedPaths"] as const) {
    const paths = facts[key] as { input: string; absolute: string; inside: boolean }[] | undefined;
    for (const path of paths ?? [])
      rows.push([
        key === "paths" ? "path" : "mentioned",
        mask(
          `${path.absolute}${path.input !== path.absolute ? ` (as ${path.input})` : ""}${path.inside ? "" : "  OUTSIDE the project"}`,
        ),
      ]);
  }
  const sandbox = facts.sandbox as { mode: string; unsandboxedRequested: boolean } | undefined;
  if (sandbox)
    rows.push([
      "sandbox",
      `${sandbox.mode}${sandbox.unsandboxedRequested ? ", asks to run OUTSIDE it" : ""}`,
    ]);
  rows.push(["asked by", verdict.by], ["why", mask(verdict.reason)]);
  if (call.risk) rows.push(["risk", call.risk]);
  return rows;
}

export class PermissionDialog implements Component {
  constructor(
    private readonly request: PermissionRequest,
    private readonly choices: Choice[],
    private readonly mask: (text: string) => string,
    private readonly c: Colors,
    private readonly answer: (key: string) => void,
  ) {}

  invalidate(): void {}

  handleInput(data: string): void {
    const key = data.toLowerCase();
    if (this.choices.some((choice) => choice.key === key)) this.answer(key);
    else if (data === "\x1b" || data === "\r" || data === "\n") this.answer("n");
  }

  render(width: number): string[] {
    const { c } = this;
    const bar = c.yellow("│ ");
    const lines = [c.yellow(`╭─ Permission needed: ${this.request.call.name}`)];
    for (const [label, text] of dialogRows(this.request, this.mask)) {
      const wrapped = wrapTextWithAnsi(`${c.dim(label.padEnd(10))} ${text}`, Math.max(20, width - 2));
      for (const line of wrapped) lines.push(`${bar}${line}`);
    }
    lines.push(c.yellow("│"));
    for (const choice of this.choices) {
      const line = `${c.bold(c.cyan(`[${choice.key}]`))} ${choice.label}`;
      for (const part of wrapTextWithAnsi(line, Math.max(20, width - 6))) lines.push(`${bar}${part}`);
    }
    lines.push(c.yellow(`╰─ ${c.dim("press a key; Esc or Enter denies")}`));
    return lines.map((line) => truncateToWidth(line, width));
  }
}

/**
 * The host prompt IO: `show` opens the dialog through `open`; a key answers on
 * `input` as typed text; what the plugin writes (the text, `> `, a retry hint) is
 * not printed (the dialog shows it), except a retry hint, through `notice`.
 */
export function dialogPromptIO(
  c: Colors,
  open: (dialog: PermissionDialog) => void,
  closed: () => void,
  notice: (text: string) => void,
): PromptIO {
  const input = new EventEmitter();
  return {
    isTTY: true,
    input: input as unknown as PromptIO["input"],
    output: {
      isTTY: true,
      write(text: string) {
        if (text.trimStart().startsWith("please answer")) notice(c.yellow(text.trim()));
        return true;
      },
    },
    show(request, text, mask) {
      let done = false;
      const dialog = new PermissionDialog(request, choicesOf(text), mask, c, (key) => {
        if (done) return;
        done = true;
        closed();
        input.emit("data", `${key}\n`);
      });
      open(dialog);
    },
  };
}
