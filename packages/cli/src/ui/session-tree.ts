/** A session's entry tree as lines for the terminal (`rein sessions tree`, `/tree` in a chat). */
import type { Session } from "@rein/harness";
import { describeEntry, entryTree, type TreeNode } from "../export/transcript.js";
import { shorten, terminal } from "./terminal.js";

/** Draws the tree; a chain continues at the same depth, a fork indents its branches. */
export function drawTree(session: Session, colors = terminal().co): string[] {
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
