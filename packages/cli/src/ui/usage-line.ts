/** The renderer's last line after a run: this run's and the session's usage totals, and how to resume. */
import type { Session } from "@rein/harness";
import { formatUsage, type UsageMark, usageReport } from "../usage/usage-totals.js";
import type { Terminal } from "./terminal.js";

export function usageLine(session: Session, mark: UsageMark): string {
  const usage = usageReport(session, mark);
  return `run ${formatUsage(usage.run)} · session ${formatUsage(usage.session)}`;
}

/**
 * How to go on, as a command that works when typed: a scripted model with no replies
 * left would answer `rein run --continue` with "No more faux responses queued", so it
 * is told to bring replies of its own.
 */
export function resumeHint(scripted: { pending(): number } | undefined): string {
  if (scripted && scripted.pending() === 0)
    return "the script has no replies left: resume with rein run --continue --script <replies.json>";
  return "resume with rein run --continue";
}

export function lastLine(
  session: Session,
  term: Terminal,
  mark: UsageMark,
  hint = resumeHint(undefined),
): void {
  term.err.write(term.c.dim(`${usageLine(session, mark)} · ${session.id.slice(0, 8)} · ${hint}\n`));
}
