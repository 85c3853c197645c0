/**
 * Writing a hook's answer: the JSON document alone on stdout, the reason on
 * stderr, the exit code. While a hook decides, stdout is reserved: a plugin's
 * `console.log` goes to stderr, since anything after the JSON makes Codex run
 * the call and Claude Code ignore the answer.
 */
import { writeSync } from "node:fs";
import { reserveStdout } from "../ui/json-stdout.js";
import type { HookAnswer } from "./agent-protocols.js";

export interface ReservedOutput {
  /** Writes the answer (once) and gives stdout back; returns the exit code. */
  answer(answer: HookAnswer): number;
}

export function reserveAnswer(): ReservedOutput {
  const stdout = reserveStdout();
  let answered = false;
  return {
    answer(answer) {
      if (!answered) {
        answered = true;
        stdout.release();
        // Synchronous writes: the process may exit right after.
        if (answer.stdout !== "") writeSync(1, answer.stdout);
        if (answer.stderr !== "") writeSync(2, answer.stderr);
      }
      return answer.exitCode;
    },
  };
}
