/**
 * A session's entry tree as lines for the terminal (`rein sessions tree`, `/tree` in a
 * chat); each child agent's tree drawn under the result of the call that started it.
 */
import type { Session, SessionEntry } from "@rein/harness";
import { type ChildSessions, withChildSessions } from "../export/child-sessions.js";
import { describeEntry, entryTree, type TreeNode } from "../export/transcript.js";
import { shorten, terminal } from "./terminal.js";

/** Draws the tree; a chain continues at the same depth, a fork indents its branches. */
export function drawTree(session: Session, colors = terminal().co): string[] {
  return withChildSessions(session, (children) => treeLines(session, children, colors));
}

type Colors = ReturnType<typeof terminal>["co"];

/** A child agent's tree goes under the result of the call that started it. */
function childLines(entry: SessionEntry, children: ChildSessions, colors: Colors, prefix: string): string[] {
  if (entry.type !== "message" || entry.message.role !== "toolResult") return [];
  const lines: string[] = [];
  for (const child of children.of(entry.message.toolCallId)) {
    lines.push(
      `${prefix}   ${colors.bold(`⤷ ${child.link.agentPath}`)} ${colors.dim(`session ${child.session.id}`)}`,
    );
    for (const line of drawTree(child.session, colors)) lines.push(`${prefix}   │ ${line}`);
  }
  return lines;
}

function treeLines(session: Session, children: ChildSessions, colors: Colors): string[] {
  const lines: string[] = [];
  const leaf = session.leafId;
  const draw = (node: TreeNode, prefix: string, connector: string, childPrefix: string) => {
    let current: TreeNode | undefined = node;
    let first = true;
    while (current) {
      const label = session.labelOf(current.entry.id);
      const marks = `${label ? ` ${colors.yellow(`[${label}]`)}` : ""}${current.entry.id === leaf ? ` ${colors.green("◀ leaf")}` : ""}`;
      const lead = first ? `${prefix}${connector}` : `${childPrefix}`;
      lines.push(
        `${lead}${colors.dim(current.entry.id)} ${shorten(describeEntry(current.entry), 70)}${marks}`,
      );
      lines.push(...childLines(current.entry, children, colors, childPrefix));
      first = false;
      if (current.children.length === 1) {
        current = current.children[0];
        continue;
      }
      current.children.forEach((child, index) => {
        const last = index === (current as TreeNode).children.length - 1;
        draw(child, childPrefix, last ? "└─ " : "├─ ", `${childPrefix}${last ? "   " : "│  "}`);
      });
      current = undefined;
    }
  };
  for (const root of entryTree(session)) draw(root, "", "", "");
  return lines;
}
