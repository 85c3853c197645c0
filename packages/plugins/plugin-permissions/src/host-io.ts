/**
 * Where the prompt asks: the terminal IO type, and the host's IO a program that
 * owns the terminal (the CLI's terminal UI) installs for every copy of this plugin
 * in the process (shared through the global symbol registry).
 */
import type { PermissionRequest } from "@rein/sdk";
import type { LineSource } from "./line-reader.js";

/** The terminal the prompt uses. `isTTY` overrides the streams' own flags. */
export interface PromptIO {
  input: LineSource & { isTTY?: boolean };
  output: { write(text: string): unknown; isTTY?: boolean };
  isTTY?: boolean;
  /**
   * Told each request, with its prompt text, before the text is written: a terminal
   * UI shows it as a dialog (the call, its facts, who asks and why, the scopes) and
   * answers on `input` as a person would type (`y`, `s`, `a`, `n`). `mask` hides
   * what redaction plugins mask in the text: apply it to anything shown from `request`.
   */
  show?(request: PermissionRequest, text: string, mask: (text: string) => string): void;
}

const HOST_IO = Symbol.for("@rein/plugin-permissions/host-prompt-io");

/**
 * The prompt IO of the program hosting Rein (the CLI's terminal UI sets it while it
 * owns the terminal; `undefined` gives the terminal back). Shared through the global
 * symbol registry, so a project's own copy of this plugin asks through it too. A
 * plugin's own `io` option still wins.
 */
export function setHostPromptIO(io: PromptIO | undefined): void {
  (globalThis as Record<symbol, unknown>)[HOST_IO] = io;
}
export const hostIO = () => (globalThis as Record<symbol, unknown>)[HOST_IO] as PromptIO | undefined;
