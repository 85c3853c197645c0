/**
 * Subagents through the built `rein`: a parent delegates to two children in
 * parallel (the `task` tool of @rein/tools-task, a scripted model); the parent's
 * policy binds the children, and `sessions tree / show / export` and `replay`
 * show all three agents, each child nested under the call that started it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, REIN_BIN, rein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(REIN_BIN, "..", "..", "..", "..");
const dist = (pkg: string) => join(repo, "packages", "plugins", pkg, "dist", "index.js");

/** Each request is answered from the conversation its first user message names. */
const ROUTER = `const conversations = {
  "delegate": [
    { toolCalls: [
      { id: "p1", name: "task", args: { prompt: "check alpha", agent: "checker" } },
      { id: "p2", name: "task", args: { prompt: "check beta", agent: "checker" } },
    ] },
    "both children reported",
  ],
  "check alpha": [
    { toolCalls: [{ id: "a1", name: "echo", args: { text: "alpha" } }] },
    { toolCalls: [{ id: "a2", name: "push", args: { remote: "origin" } }] },
    "alpha is fine",
  ],
  "check beta": [{ toolCalls: [{ id: "b1", name: "echo", args: { text: "beta" } }] }, "beta is fine"],
};
const route = ({ context }) => {
  const first = context.messages.find((m) => m.role === "user");
  const key = typeof first.content === "string" ? first.content : first.content.map((b) => b.text ?? "").join("");
  const turn = context.messages.filter((m) => m.role === "assistant").length;
  return conversations[key][turn] ?? "done";
};`;

const config = `import { defineConfig } from "@rein/sdk";
import policy from ${JSON.stringify(dist("plugin-policy"))};
import task from ${JSON.stringify(dist("tools-task"))};
${ROUTER}
export default defineConfig({
  model: { script: Array.from({ length: 12 }, () => route) },
  plugins: [
    "./tools.ts",
    [policy, { rules: [{ id: "no-push", rule: "push", decision: "deny", reason: "nobody pushes" }] }],
    [task, { maxConcurrent: 2, agents: { checker: { description: "checks one thing", tools: ["echo", "push"], rules: [{ rule: "echo(secret*)", decision: "deny", reason: "children keep no secrets" }] } } }],
  ],
});
`;

describe("subagents through the built rein", { timeout: 120_000 }, () => {
  it("a parent delegates to two children in parallel; tree, show, export and replay show all three", async () => {
    const dir = project({ "rein.config.ts": config, "tools.ts": TOOLS_PLUGIN });
    const ran = await rein(["run", "delegate"], dir);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("both children reported");
    // The run shows each child's decisions under its task call, with the agent path.
    expect(ran.stderr).toMatch(/│ push .* denied by policy:no-push in task#1 of run \S+: nobody pushes/);

    const store = new SessionStore(join(dir, ".rein/sessions"));
    // The children's sessions are not top-level sessions: `--continue` never picks one.
    const listed = store.list();
    expect(listed).toHaveLength(1);
    const id = listed[0]?.id as string;
    const children = new SessionStore(join(dir, ".rein/sessions/children", id)).list();
    expect(children).toHaveLength(2);

    const tree = await rein(["sessions", "tree", id], dir);
    expect(tree.code, tree.stderr).toBe(0);
    const runId = /task#1 of run (\S+)/.exec(tree.stdout)?.[1] as string;
    expect(runId).toBeDefined();
    expect(tree.stdout).toContain(`⤷ task#1 of run ${runId}`);
    expect(tree.stdout).toContain(`⤷ task#2 of run ${runId}`);
    // Each child's entries are drawn under the parent's result of the call that started it.
    expect(tree.stdout).toMatch(
      /result task\n\s+⤷ task#1 of run \S+ session \S+\n(\s+│ .*\n)*\s+│ .*user: check alpha/,
    );
    expect(tree.stdout).toMatch(/│ .*user: check beta/);

    const show = await rein(["sessions", "show", id], dir);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("user  delegate");
    expect(show.stdout).toContain("│ user  check alpha");
    expect(show.stdout).toContain("│ user  check beta");
    expect(show.stdout).toContain(`denied by policy:no-push in task#1 of run ${runId}: nobody pushes`);
    expect(show.stdout).toContain(`allowed by harness:default in task#2 of run ${runId}`);
    // The parent's result of each task call summarises the child's decisions.
    expect(show.stdout).toMatch(/alpha is fine/);

    const exported = await rein(["sessions", "export", id], dir);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain(`> **Child agent \`task#1 of run ${runId}\`**`);
    expect(exported.stdout).toContain(`> **Child agent \`task#2 of run ${runId}\`**`);
    expect(exported.stdout).toContain(
      `> **Denied** by \`policy:no-push in task#1 of run ${runId}\`: nobody pushes`,
    );

    const html = await rein(["sessions", "export", "--html", id], dir);
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toContain(`<b>Child agent task#2 of run ${runId}</b>`);
    expect(html.stdout).toContain(`policy:no-push in task#1 of run ${runId}`);

    const replay = await rein(["replay", "--json", id], dir);
    expect(replay.code, replay.stderr).toBe(0);
    const lines = replay.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => [l.agent ?? "parent", l.tool, l.recorded, l.now, l.changed])).toEqual([
      ["parent", "task", "allow", "allow", false],
      ["parent", "task", "allow", "allow", false],
      [`task#1 of run ${runId}`, "echo", "allow", "allow", false],
      [`task#1 of run ${runId}`, "push", "deny", "deny", false],
      [`task#2 of run ${runId}`, "echo", "allow", "allow", false],
    ]);
    expect(lines[3]).toMatchObject({ by: `policy:no-push in task#1 of run ${runId}` });

    // Today's stack decides: without the rule, the child's push would run, and replay says so.
    writeFileSync(
      join(dir, "rein.config.ts"),
      config.replace('decision: "deny", reason: "nobody pushes"', 'decision: "ask", reason: "ask first"'),
    );
    const changed = await rein(["replay", id], dir);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toMatch(
      /CHANGED #4 \[task#1 of run \S+\] push .*recorded deny → now ask by policy:no-push in task#1 of run/,
    );
    expect(changed.stderr).toContain("5 tool calls replayed, 1 changed");
  });

  it("rein check --as-child decides a call as a child of an agent config would: the parent's stack plus its narrowing", async () => {
    const dir = project({ "rein.config.ts": config, "tools.ts": TOOLS_PLUGIN });
    const asParent = await rein(["check", "--json", "echo(secret plan)"], dir);
    expect(asParent.code, asParent.stderr).toBe(0);
    const child = await rein(["check", "--json", "--as-child", "checker", "echo(secret plan)"], dir);
    expect(child.code, child.stderr).toBe(1);
    expect(JSON.parse(child.stdout)).toMatchObject({
      decision: "deny",
      by: "@rein/tools-task:checker.rules[0] in task(checker) of rein check",
      reason: expect.stringContaining("children keep no secrets"),
    });
    const push = await rein(["check", "--json", "--as-child", "checker", "push(origin)"], dir);
    expect(JSON.parse(push.stdout)).toMatchObject({
      decision: "deny",
      by: "policy:no-push in task(checker) of rein check",
    });
    // The checker's tools are echo and push: anything else is not the child's.
    const wait = await rein(["check", "--json", "--as-child", "checker", "wait"], dir);
    expect(JSON.parse(wait.stdout)).toMatchObject({
      decision: "deny",
      by: "harness",
      tool: { active: false },
    });
    const unknown = await rein(["check", "--as-child", "nobody", "echo(x)"], dir);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('no agent config "nobody"');
    expect(unknown.stderr).toContain("agent configs: default, checker");
  });
});
