/**
 * A session as one standalone HTML page (no external assets): the branch tree
 * with labels and the active leaf, usage and cost totals, then the active
 * branch's messages and tool calls, each gate decision shown with `by` and
 * `reason` and, when recorded, its trail (every tap's answer) on click.
 *
 * Invariants: every recorded text is escaped; the tree indents only where the
 * history branches (a linear history is one flat list); totals count every
 * assistant message of the session, abandoned branches included (all of it was
 * spent); the filters only hide, never drop, what the page holds.
 */
import type { DecisionRecord, Session } from "@rein/harness";
import { wasAsked } from "../replay/recorded.js";
import { ChildSessions } from "./child-sessions.js";
import { type DecisionStep, trailOf } from "./decision-step.js";
import { describeEntry, entryTree, type TreeNode, transcript } from "./transcript.js";

// Anything recorded may be hostile or malformed (a hand-edited file): always a string, always escaped.
const escapeHtml = (text: unknown) =>
  String(text ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

const STYLE = `
body{font:14px/1.5 system-ui,sans-serif;margin:0;display:grid;grid-template-columns:minmax(240px,32%) 1fr;min-height:100vh;color:#1d1d1f}
nav{background:#f5f5f7;border-right:1px solid #ddd;padding:12px;overflow:auto}
main{padding:16px 24px;max-width:900px}
ul.tree,ul.branches{list-style:none;margin:0;padding-left:0}
ul.branches{padding-left:14px}
li.branch{border-left:2px solid #c9c9d1;padding-left:6px;margin:4px 0}
ul.tree li{white-space:nowrap;font-size:12px}
li.on-branch>span{font-weight:500}
.leaf>span{background:#d7f5dd;font-weight:600}
.label{background:#fff3c4;border-radius:3px;padding:0 4px;margin-left:4px}
.id{color:#888;font-family:ui-monospace,monospace;margin-right:4px}
.usage{font-size:13px;color:#444;margin:4px 0 12px}
.filters{margin:8px 0 12px}
.filters button{font:inherit;font-size:12px;border:1px solid #bbb;background:#fff;border-radius:12px;padding:1px 10px;margin-right:4px;cursor:pointer}
.filters button[aria-pressed=true]{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
.msg{border-radius:8px;padding:8px 12px;margin:10px 0}
.user{background:#eef4ff}.assistant{background:#f7f7f7}.note{color:#666;font-style:italic}
.tool{border:1px solid #ddd;border-radius:6px;margin:8px 0;padding:6px 10px;background:#fff}
.child{border-left:3px solid #99c;margin:8px 0 8px 4px;padding-left:10px}
.decision{font-size:12px;margin:4px 0}
.decision.deny{color:#b00020}.decision.allow{color:#1b7f3b}
details.trail{font-size:12px;color:#1d1d1f;margin:2px 0 4px}
details.trail summary{cursor:pointer;color:#555}
details.trail ol{margin:4px 0;padding-left:20px}
.step .answer{font-weight:600}.step.deny .answer{color:#b00020}.step.allow .answer{color:#1b7f3b}.step.ask .answer{color:#a05a00}
.step.no-opinion{color:#777}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:6px;border-radius:4px;margin:4px 0}
.error{color:#b00020}`;

/** Shows only the tool calls of one decision kind (and the messages holding them). */
const FILTER_SCRIPT = `
for (const button of document.querySelectorAll("[data-filter]")) {
  button.addEventListener("click", () => {
    const filter = button.dataset.filter;
    for (const other of document.querySelectorAll("[data-filter]")) other.setAttribute("aria-pressed", String(other === button));
    for (const tool of document.querySelectorAll("main .tool")) {
      tool.hidden = filter !== "all" && !(tool.dataset.categories || "").split(" ").includes(filter);
    }
    for (const msg of document.querySelectorAll("main .msg")) {
      msg.hidden = filter !== "all" && msg.querySelector(".tool:not([hidden])") === null;
    }
  });
}`;

const DEFAULT_DECIDER = "harness:default";

/** The filter categories a decision belongs to: `deny`, `ask`, `default` (allowed by the default verdict). */
export function decisionCategories(decision: DecisionRecord | undefined): string[] {
  if (!decision) return [];
  const categories: string[] = [];
  const asked = wasAsked(decision);
  if (decision.decision === "deny") categories.push("deny");
  if (asked) categories.push("ask");
  if (decision.decision === "allow" && !asked && decision.by === DEFAULT_DECIDER) categories.push("default");
  return categories;
}

// ---- the tree ----

function itemHtml(node: TreeNode, session: Session, onBranch: ReadonlySet<string>): string {
  const label = session.labelOf(node.entry.id);
  const isLeaf = node.entry.id === session.leafId;
  const text = escapeHtml(describeEntry(node.entry).slice(0, 80));
  const labelHtml = label ? `<span class="label">${escapeHtml(label)}</span>` : "";
  const classes = [isLeaf ? "leaf" : "", onBranch.has(node.entry.id) ? "on-branch" : ""].filter(Boolean);
  return `<li class="${classes.join(" ")}" data-entry="${escapeHtml(node.entry.id)}"><span><span class="id">${escapeHtml(node.entry.id)}</span>${text}</span>${labelHtml}${isLeaf ? " ◀ leaf" : ""}</li>`;
}

function forkHtml(nodes: TreeNode[], session: Session, onBranch: ReadonlySet<string>): string {
  const branches = nodes.map(
    (child) => `<li class="branch"><ul class="tree">${chainHtml(child, session, onBranch)}</ul></li>`,
  );
  return `<li class="fork"><ul class="branches">${branches.join("")}</ul></li>`;
}

/** A chain of single children as one flat list; a fork nests one list per branch. */
function chainHtml(start: TreeNode, session: Session, onBranch: ReadonlySet<string>): string {
  const items: string[] = [];
  let node: TreeNode | undefined = start;
  while (node) {
    items.push(itemHtml(node, session, onBranch));
    if (node.children.length > 1) items.push(forkHtml(node.children, session, onBranch));
    node = node.children.length === 1 ? node.children[0] : undefined;
  }
  return items.join("");
}

function treeHtml(session: Session): string {
  const roots = entryTree(session);
  const onBranch = new Set(session.branch().map((entry) => entry.id));
  const [only] = roots;
  const body =
    roots.length === 1 && only
      ? chainHtml(only, session, onBranch)
      : roots.length > 1
        ? forkHtml(roots, session, onBranch)
        : "";
  return `<ul class="tree">${body}</ul>`;
}

// ---- usage ----

export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: number;
  responses: number;
}

/** Totals over every assistant message's `usage` (every branch: all of it was spent). */
export function usageTotals(session: Session): UsageTotals {
  const totals: UsageTotals = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: 0,
    responses: 0,
  };
  for (const entry of session.entries()) {
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    totals.responses++;
    const usage = entry.message.usage;
    if (!usage) continue;
    totals.input += usage.input ?? 0;
    totals.output += usage.output ?? 0;
    totals.cacheRead += usage.cacheRead ?? 0;
    totals.cacheWrite += usage.cacheWrite ?? 0;
    totals.totalTokens += usage.totalTokens ?? 0;
    totals.cost += usage.cost?.total ?? 0;
  }
  return totals;
}

const count = (n: number) => n.toLocaleString("en-US");

function usageHtml(totals: UsageTotals): string {
  const tokens = [
    `${count(totals.input)} in`,
    `${count(totals.output)} out`,
    `${count(totals.cacheRead)} cache read`,
    `${count(totals.cacheWrite)} cache write`,
    `${count(totals.totalTokens)} total`,
  ].join(" · ");
  return `<div class="usage" data-usage><b>Usage</b> (${count(totals.responses)} responses): <span data-tokens>${tokens}</span> · <b>Cost</b> <span data-cost>$${totals.cost.toFixed(4)}</span></div>`;
}

// ---- decisions ----

function stepHtml(step: DecisionStep): string {
  const answerClass = String(step.answer).replace(/\s+/g, "-");
  const reason = step.reason ? `: ${escapeHtml(step.reason)}` : "";
  const args =
    step.answer === "rewrite" && step.args !== undefined
      ? `<pre>${escapeHtml(JSON.stringify(step.args, null, 2))}</pre>`
      : "";
  return `<li class="step ${escapeHtml(answerClass)}"><code>${escapeHtml(step.hook)}</code> <b>${escapeHtml(step.by)}</b> <span class="answer">${escapeHtml(step.answer)}</span>${reason}${args}</li>`;
}

function decisionHtml(decision: DecisionRecord): string {
  const trail = trailOf(decision);
  const trailHtml =
    trail && trail.length > 0
      ? `<details class="trail"><summary>decision trail (${trail.length} step${trail.length === 1 ? "" : "s"})</summary><ol>${trail.map(stepHtml).join("")}</ol></details>`
      : "";
  const verdict = escapeHtml(String(decision.decision));
  return `<div class="decision ${verdict}" data-decision="${verdict}"><b>${decision.decision === "deny" ? "Denied" : "Allowed"}</b> by <code>${escapeHtml(decision.by)}</code>: ${escapeHtml(decision.reason)}${decision.askedBy ? ` (asked by <code>${escapeHtml(decision.askedBy)}</code>)` : ""}</div>${trailHtml}`;
}

function filtersHtml(counts: Record<string, number>): string {
  const buttons = [
    ["all", "All"],
    ["deny", "Denied"],
    ["ask", "Asked"],
    ["default", "Allowed by default"],
  ].map(
    ([filter, label]) =>
      `<button type="button" data-filter="${filter}" aria-pressed="${filter === "all"}">${label}${filter === "all" ? "" : ` (${counts[filter as string] ?? 0})`}</button>`,
  );
  return `<div class="filters"><b>Show:</b> ${buttons.join("")}</div>`;
}

/** The transcript's messages; each child agent's nested under its call (their decisions counted too). */
function transcriptHtml(session: Session, counts: Record<string, number>): string[] {
  const body: string[] = [];
  const children = new ChildSessions(session);
  try {
    for (const item of transcript(session)) {
      if (item.kind === "user")
        body.push(`<div class="msg user"><b>User</b><div>${escapeHtml(item.text)}</div></div>`);
      else if (item.kind === "note") body.push(`<div class="msg note">${escapeHtml(item.text)}</div>`);
      else {
        const calls = item.toolCalls.map((call) => {
          const categories = decisionCategories(call.decision);
          for (const category of categories) counts[category] = (counts[category] ?? 0) + 1;
          const decision = call.decision ? decisionHtml(call.decision) : "";
          const result = call.result
            ? `<pre class="${call.result.isError ? "error" : ""}">${escapeHtml(call.result.text.slice(0, 4000))}</pre>`
            : "";
          // A child agent's session, nested under the call that started it.
          const nested = children
            .of(call.id)
            .map(
              (child) =>
                `<div class="child"><b>Child agent ${escapeHtml(child.link.agentPath)}</b> <small>session ${escapeHtml(child.session.id)}</small>${transcriptHtml(child.session, counts).join("\n")}</div>`,
            )
            .join("");
          return `<div class="tool" data-tool="${escapeHtml(call.name)}" data-categories="${categories.join(" ")}"><b>${escapeHtml(call.name)}</b><pre>${escapeHtml(JSON.stringify(call.args, null, 2))}</pre>${decision}${nested}${result}</div>`;
        });
        const error = item.error ? `<div class="error">Error: ${escapeHtml(item.error)}</div>` : "";
        body.push(
          `<div class="msg assistant"><b>Assistant</b> <small>${escapeHtml(item.model)}</small><div>${escapeHtml(item.text)}</div>${error}${calls.join("")}</div>`,
        );
      }
    }
  } finally {
    children.close();
  }
  return body;
}

export function sessionHtml(session: Session): string {
  const counts: Record<string, number> = {};
  const body = transcriptHtml(session, counts);
  const title = `Rein session ${session.id}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><nav><h3>Branch tree</h3>${treeHtml(session)}</nav>
<main><h1>${escapeHtml(session.name ?? title)}</h1>
<p><small>created ${new Date(session.header.createdAt).toISOString()}</small></p>
${usageHtml(usageTotals(session))}
${filtersHtml(counts)}
${body.join("\n")}
</main><script>${FILTER_SCRIPT}</script></body></html>
`;
}
