/**
 * A session as one standalone HTML page (no external assets): the branch tree
 * with labels and the active leaf, then the active branch's messages and tool
 * calls, each gate decision shown with `by` and `reason`.
 */
import type { Session } from "@rein/harness";
import { describeEntry, entryTree, type TreeNode, transcript } from "./transcript.js";

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const STYLE = `
body{font:14px/1.5 system-ui,sans-serif;margin:0;display:grid;grid-template-columns:minmax(240px,32%) 1fr;min-height:100vh;color:#1d1d1f}
nav{background:#f5f5f7;border-right:1px solid #ddd;padding:12px;overflow:auto}
main{padding:16px 24px;max-width:900px}
ul.tree{list-style:none;padding-left:14px;margin:0}
ul.tree li{white-space:nowrap;font-size:12px}
.leaf>span{background:#d7f5dd;font-weight:600}
.label{background:#fff3c4;border-radius:3px;padding:0 4px;margin-left:4px}
.id{color:#888;font-family:ui-monospace,monospace;margin-right:4px}
.msg{border-radius:8px;padding:8px 12px;margin:10px 0}
.user{background:#eef4ff}.assistant{background:#f7f7f7}.note{color:#666;font-style:italic}
.tool{border:1px solid #ddd;border-radius:6px;margin:8px 0;padding:6px 10px;background:#fff}
.decision{font-size:12px;margin:4px 0}
.decision.deny{color:#b00020}.decision.allow{color:#1b7f3b}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:6px;border-radius:4px;margin:4px 0}
.error{color:#b00020}`;

function treeHtml(nodes: TreeNode[], session: Session): string {
  const items = nodes.map((node) => {
    const label = session.labelOf(node.entry.id);
    const isLeaf = node.entry.id === session.leafId;
    const text = escapeHtml(describeEntry(node.entry).slice(0, 80));
    const labelHtml = label ? `<span class="label">${escapeHtml(label)}</span>` : "";
    const children = node.children.length > 0 ? treeHtml(node.children, session) : "";
    return `<li class="${isLeaf ? "leaf" : ""}" data-entry="${node.entry.id}"><span><span class="id">${node.entry.id}</span>${text}</span>${labelHtml}${isLeaf ? " ◀ leaf" : ""}${children}</li>`;
  });
  return `<ul class="tree">${items.join("")}</ul>`;
}

export function sessionHtml(session: Session): string {
  const body: string[] = [];
  for (const item of transcript(session)) {
    if (item.kind === "user")
      body.push(`<div class="msg user"><b>User</b><div>${escapeHtml(item.text)}</div></div>`);
    else if (item.kind === "note") body.push(`<div class="msg note">${escapeHtml(item.text)}</div>`);
    else {
      const calls = item.toolCalls.map((call) => {
        const decision = call.decision
          ? `<div class="decision ${call.decision.decision}" data-decision="${call.decision.decision}"><b>${call.decision.decision === "deny" ? "Denied" : "Allowed"}</b> by <code>${escapeHtml(call.decision.by)}</code>: ${escapeHtml(call.decision.reason)}${call.decision.askedBy ? ` (asked by <code>${escapeHtml(call.decision.askedBy)}</code>)` : ""}</div>`
          : "";
        const result = call.result
          ? `<pre class="${call.result.isError ? "error" : ""}">${escapeHtml(call.result.text.slice(0, 4000))}</pre>`
          : "";
        return `<div class="tool" data-tool="${escapeHtml(call.name)}"><b>${escapeHtml(call.name)}</b><pre>${escapeHtml(JSON.stringify(call.args, null, 2))}</pre>${decision}${result}</div>`;
      });
      const error = item.error ? `<div class="error">Error: ${escapeHtml(item.error)}</div>` : "";
      body.push(
        `<div class="msg assistant"><b>Assistant</b> <small>${escapeHtml(item.model)}</small><div>${escapeHtml(item.text)}</div>${error}${calls.join("")}</div>`,
      );
    }
  }
  const title = `Rein session ${session.id}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><nav><h3>Branch tree</h3>${treeHtml(entryTree(session), session)}</nav>
<main><h1>${escapeHtml(session.name ?? title)}</h1>
<p><small>created ${new Date(session.header.createdAt).toISOString()}</small></p>
${body.join("\n")}
</main></body></html>
`;
}
