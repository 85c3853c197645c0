/** `rein sessions export <id> [--html] [-o file]`. */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { ExitCode } from "../errors.js";
import { sessionHtml } from "../export/html.js";
import { sessionMarkdown } from "../export/markdown.js";
import type { GlobalOptions } from "../program.js";
import { openReadOnly } from "./session-access.js";

export async function exportSession(
  id: string,
  options: { format?: string; html?: boolean; out?: string },
  globals: GlobalOptions,
): Promise<number> {
  const session = await openReadOnly(id, globals);
  try {
    const html = options.html === true || options.format === "html";
    const text = html ? sessionHtml(session) : sessionMarkdown(session);
    if (options.out) {
      const file = resolve(globals.cwd, options.out);
      writeFileSync(file, text);
      process.stderr.write(`wrote ${file}\n`);
    } else {
      process.stdout.write(text);
    }
    return ExitCode.ok;
  } finally {
    session.close();
  }
}
