/**
 * Where a scripted model resumes. A script is a fixed list of replies; a resumed
 * session (`--continue`, `--session`) already holds the replies given in earlier
 * processes. Rule: every assistant message on the session's active branch that a
 * scripted model gave (provider `faux`) consumed one script step, except error
 * replies (a request beyond the script consumed nothing); the resumed script goes
 * on after those.
 */
import type { Session } from "@rein/harness";
import type { ScriptedModel } from "@rein/sdk";

export function scriptRepliesGiven(session: Session, scripted: ScriptedModel): number {
  const provider = scripted.model.provider;
  // The branch's entries, not the built context: compaction summarises old messages away.
  return session.branch().filter((entry) => {
    if (entry.type !== "message") return false;
    const m = entry.message;
    return m.role === "assistant" && m.provider === provider && m.stopReason !== "error";
  }).length;
}
