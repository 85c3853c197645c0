/** `rein sessions export <id> [--format md|html|jsonl] [--html] [-o file]`. */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Session } from "@rein/harness";
import { openReadOnly } from "../agent/session-access.js";
import { ExitCode } from "../errors.js";
import { sessionHtml } from "../export/html.js";
import { sessionMarkdown } from "../export/markdown.js";
import type { GlobalOptions } from "../globals.js";

export async function exportSession(
  id: string,
  options: { format?: string; html?: boolean; out?: string },
  globals: GlobalOptions,
): Promise<number> {
  const session = await openReadOnly(id, globals);
  try {
    const html = options.html === true || options.format === "html";
    const jsonl = options.format === "jsonl";
    const text = jsonl ? sessionJsonl(session) : html ? sessionHtml(session) : sessionMarkdown(session);
    if (options.out) {
      const file = resolve(globals.cwd, options.out);
      // A JSONL export is a session file: never overwrite one.
      writeFileSync(file, text, jsonl ? { flag: "wx" } : {});
      process.stderr.write(`wrote ${file}\n`);
    } else {
      process.stdout.write(text);
    }
    return ExitCode.ok;
  } finally {
    session.close();
  }
}

/** The session as a JSONL session file: the header line, then every entry and journal record in stored order. */
function sessionJsonl(session: Session): string {
  const lines = [session.header, ...session.storage.load().entries].map((value) => JSON.stringify(value));
  return `${lines.join("\n")}\n`;
}
