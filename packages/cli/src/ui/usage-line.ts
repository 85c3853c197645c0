/** The renderer's last line after a run: this run's and the session's usage totals, and how to resume. */
import type { Session } from "@rein/harness";
import { formatUsage, type UsageMark, usageReport } from "../usage/usage-totals.js";
import type { Terminal } from "./terminal.js";

export function usageLine(session: Session, mark: UsageMark): string {
  const usage = usageReport(session, mark);
  return `run ${formatUsage(usage.run)} · session ${formatUsage(usage.session)}`;
}

export function lastLine(session: Session, term: Terminal, mark: UsageMark): void {
  term.err.write(
    term.c.dim(`${usageLine(session, mark)} · ${session.id.slice(0, 8)} · resume with rein run --continue\n`),
  );
}
