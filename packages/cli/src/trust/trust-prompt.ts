/**
 * The terminal question when the project's code is new or changed: the files, and
 * whether to trust them now. Asked only when both stdin and stderr are terminals
 * (a person is there to answer); anything but yes refuses.
 */
import { createInterface } from "node:readline/promises";
import { describeChanges, type TrustChange } from "./project-trust.js";

export const askOnTerminal = () => process.stdin.isTTY === true && process.stderr.isTTY === true;

export async function askToTrust(changes: TrustChange[], project: string): Promise<boolean> {
  const lines = [
    `rein: ${project} has project code Rein has not been told to trust:`,
    `  ${describeChanges(changes, project) || "(no config files; plugins and imports are recorded as they load)"}`,
    "Rein loads and runs these files unsandboxed. Trust them and continue? [y/N] ",
  ];
  const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await prompt.question(lines.join("\n"));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}
