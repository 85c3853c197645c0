/** A session's active branch as Markdown: messages, tool calls with arguments, results and decisions. */
import type { Session } from "@rein/harness";
import { trailLines } from "../ui/decision-trail.js";
import { formatUsage, sessionUsage } from "../usage/usage-totals.js";
import { ChildSessions } from "./child-sessions.js";
import { transcript } from "./transcript.js";

const fence = (text: string, lang = "") => {
  const ticks = text.includes("```") ? "````" : "```";
  return `${ticks}${lang}\n${text}\n${ticks}`;
};

export function sessionMarkdown(session: Session): string {
  const parts = [`# Session ${session.id}`, ""];
  if (session.name) parts.push(`_${session.name}_`, "");
  parts.push(
    `Created ${new Date(session.header.createdAt).toISOString()}${session.header.cwd ? ` in \`${session.header.cwd}\`` : ""}.`,
    "",
  );
  const usage = sessionUsage(session.entries(), session.header.forkedFrom);
  parts.push(
    `Usage: ${formatUsage(usage)} over ${usage.requests} model request${usage.requests === 1 ? "" : "s"} (every branch; cache read ${usage.cacheRead}, cache write ${usage.cacheWrite} tokens).`,
    "",
  );
  parts.push(...transcriptParts(session));
  return `${parts.join("\n").trimEnd()}\n`;
}

/** The transcript; a child agent's nested under the call that started it, as a quote. */
function transcriptParts(session: Session): string[] {
  const parts: string[] = [];
  const children = new ChildSessions(session);
  try {
    for (const item of transcript(session)) {
      if (item.kind === "user") parts.push("## User", "", item.text, "");
      else if (item.kind === "note") parts.push(`> ${item.text.replace(/\n/g, "\n> ")}`, "");
      else {
        parts.push(`## Assistant (${item.model})`, "");
        if (item.usage) {
          const one = { ...item.usage, requests: 1, cost: { ...item.usage.cost } };
          parts.push(`_${formatUsage(one)}_`, "");
        }
        if (item.text) parts.push(item.text, "");
        if (item.error) parts.push(`**Error:** ${item.error}`, "");
        for (const call of item.toolCalls) {
          parts.push(
            `### Tool call \`${call.name}\``,
            "",
            fence(JSON.stringify(call.args, null, 2), "json"),
            "",
          );
          if (call.decision) {
            const verb = call.decision.decision === "deny" ? "**Denied**" : "Allowed";
            parts.push(
              `${verb} by \`${call.decision.by}\`: ${call.decision.reason}${call.decision.askedBy ? ` (asked by \`${call.decision.askedBy}\`)` : ""}`,
              "",
            );
            // The per-tap trail (recorded with `decisions: { trail: true }`), one line per tap as `rein check` prints it.
            if (call.decision.trail) {
              parts.push(
                "Decision trail:",
                "",
                fence(trailLines(call.decision.trail).join("\n") || "(no taps ran)"),
                "",
              );
            }
          }
          for (const child of children.of(call.id)) {
            const nested = [
              `**Child agent \`${child.link.agentPath}\`** (session \`${child.session.id}\`)`,
              "",
              ...transcriptParts(child.session),
            ];
            parts.push(...nested.map((line) => (line === "" ? ">" : `> ${line}`)), "");
          }
          if (call.result)
            parts.push(call.result.isError ? "Result (error):" : "Result:", "", fence(call.result.text), "");
        }
      }
    }
  } finally {
    children.close();
  }
  return parts;
}
