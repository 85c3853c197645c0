/**
 * What the person (or, without a terminal, the model) reads about a pending call:
 * the prompt, the answers it takes, and the how-to of a deny given without a
 * terminal. Invariant: every option names exactly what it would grant.
 */
import type { PermissionRequest, ToolGateCall } from "@rein/sdk";
import { describeScope, NOT_REMEMBERED, notUnderstood, prefixScopeOf, scopeOf } from "./grants.js";

export type Answer = "once" | "session" | "project" | "deny";

/** How the call reads in policy-rule grammar: `bash(git push)`, `write(src/a.ts)`, or the bare tool name. */
export function ruleFor(
  call: Pick<ToolGateCall, "name" | "args"> & { facts?: ToolGateCall["facts"] },
): string {
  // A path rule is spelled on the canonical path the gates saw (src/link -> ../.env reads .env).
  const [only, ...more] = call.facts?.paths ?? [];
  if (only && more.length === 0 && only.inside && !only.relative.startsWith("..")) {
    return `${call.name}(${only.relative})`;
  }
  for (const key of ["command", "path"]) {
    const value = call.args[key];
    if (typeof value === "string" && !value.includes("\n")) return `${call.name}(${value})`;
  }
  return call.name;
}

/** The reason of a deny given without a terminal: why, and how to allow such a call. */
export function nonInteractiveReason(
  request: PermissionRequest,
  why = "there is no terminal to ask",
): string {
  const { call, verdict } = request;
  const how = [
    `run it in a terminal and answer "y" or "s"`,
    `or allow it in the config, e.g. ["@rein/plugin-policy", { rules: [{ rule: ${JSON.stringify(ruleFor(call))}, decision: "allow", reason: "..." }] }]`,
  ];
  if (verdict.by === "harness:default") {
    how.push(
      `or set ["@rein/plugin-permissions", { defaults: { ${call.risk ?? "unknown"}: "allow" } }] (the default verdict asked)`,
    );
  }
  return `${verdict.reason} (asked by ${verdict.by}); ${why}, so it is denied. To allow it: ${how.join(", ")}`;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => prefix + line)
    .join("\n");
}

/**
 * The prompt text for one request: the session option names exactly what it would
 * grant; with `project` (the grants file as shown), so does the "always" option.
 */
export function promptText(request: PermissionRequest, scope: "call" | "exact", project?: string): string {
  const { call, verdict } = request;
  const vague = notUnderstood(call);
  const sessionWhat = vague ? NOT_REMEMBERED : describeScope(call.name, scopeOf(call, scope === "exact"));
  const always = project
    ? `   [a] always in this project (${vague ? NOT_REMEMBERED : `${describeScope(call.name, prefixScopeOf(call))}; saved in ${project}`})`
    : "";
  return [
    "",
    `Permission needed: ${call.name}${call.risk ? ` (risk: ${call.risk})` : ""}`,
    `  reason: ${verdict.reason}`,
    `  asked by: ${verdict.by}`,
    "  arguments:",
    indent(JSON.stringify(call.args, null, 2), "    "),
    `  [y] allow once   [s] allow for this session (${sessionWhat})${always}   [n] deny`,
    "",
  ].join("\n");
}

export function parseAnswer(line: string, project: boolean): Answer | undefined {
  const answer = line.trim().toLowerCase();
  if (["y", "yes", "o", "once", "allow"].includes(answer)) return "once";
  if (project && ["a", "always", "p", "project"].includes(answer)) return "project";
  if (["s", "session", "a", "always"].includes(answer)) return "session";
  if (["n", "no", "d", "deny", ""].includes(answer)) return "deny";
  return undefined;
}
