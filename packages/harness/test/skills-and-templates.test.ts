/**
 * Skills and prompt templates as harness resources: `skill()` / `template()` are
 * structural operations (idle only, `busy` otherwise), consume the next-turn
 * queue, record what was invoked (name, path, sha256, arguments) before the
 * run's messages; skills are frozen per turn in the snapshot and visible to
 * hooks; an active skill's `allowed-tools` narrow the following turns' tools
 * (a call to a tool it excludes is refused) and never overrule a gate.
 */
import { createHash } from "node:crypto";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { HarnessErrorCode } from "../src/errors.js";
import type { SkillResource, TemplateResource } from "../src/resources/resource-types.js";
import { createSkillTool } from "../src/resources/skill-tool.js";
import { resolveApproval } from "../src/session/approvals.js";
import type { AnyAgentTool } from "../src/tools.js";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

function skill(name: string, fields: Partial<SkillResource> = {}): SkillResource {
  const body = fields.body ?? `Do ${name} carefully. Target: $1`;
  return {
    name,
    description: `The ${name} skill`,
    body,
    path: `/skills/${name}/SKILL.md`,
    dir: `/skills/${name}`,
    sha256: sha(body),
    ...fields,
  };
}

const review: TemplateResource = {
  name: "review",
  body: "Review $1 for $2.",
  path: ".rein/prompts/review.md",
  sha256: sha("Review $1 for $2."),
};

function otherTool(calls: string[]): AnyAgentTool {
  return {
    name: "other",
    description: "Another tool",
    parameters: Type.Object({}),
    risk: "exec",
    execute: async () => {
      calls.push("other");
      return { content: [{ type: "text", text: "other ran" }] };
    },
  };
}

const userTexts = (f: ReturnType<typeof fixture>) =>
  f.messages().flatMap((m) => (m.role === "user" && typeof m.content === "string" ? [m.content] : []));

const records = (f: ReturnType<typeof fixture>, type: string) =>
  f.session.entries().flatMap((e) => (e.type === "custom" && e.customType === type ? [e.data] : []));

describe("skill() and template(): structural operations", () => {
  it("skill() sends the skill's body with its arguments and records name, path, sha256 and arguments first", async () => {
    const f = fixture({ skills: [skill("deploy")] });
    f.scripted.script([reply("done")]);
    const outcome = await f.harness.skill("deploy", ["staging"]);
    expect(outcome.status).toBe("completed");
    const [text] = userTexts(f);
    expect(text).toContain('<skill name="deploy" location="/skills/deploy/SKILL.md">');
    expect(text).toContain("Do deploy carefully. Target: staging");
    // The record precedes the run's messages (the run's config drift entries may sit between).
    const types = f.entryTypes().filter((t) => t === "custom" || t === "user" || t === "assistant");
    expect(types).toEqual(["custom", "user", "assistant"]);
    expect(records(f, "rein.skill")).toEqual([
      {
        name: "deploy",
        path: "/skills/deploy/SKILL.md",
        sha256: skill("deploy").sha256,
        args: ["staging"],
        via: "invoke",
        runId: outcome.runId,
      },
    ]);
  });

  it("template() sends the expanded template and records which one", async () => {
    const f = fixture({ templates: [review] });
    f.scripted.script([reply("done")]);
    await f.harness.template("review", "src/a.ts 'error handling'");
    expect(userTexts(f)).toEqual(["Review src/a.ts for error handling."]);
    expect(records(f, "rein.prompt_template")).toEqual([
      {
        name: "review",
        file: ".rein/prompts/review.md",
        sha256: review.sha256,
        args: ["src/a.ts", "error handling"],
      },
    ]);
  });

  it("both reject with busy while a run is in progress, and take the phase synchronously", async () => {
    const release = gate();
    const started = gate();
    const echo = echoTool({
      execute: async () => {
        started.open();
        await release.opened;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool], skills: [skill("deploy")], templates: [review] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const run = f.harness.skill("deploy");
    expect(f.harness.phase).toBe("turn");
    await started.opened;
    await expect(f.harness.skill("deploy")).rejects.toMatchObject({ code: HarnessErrorCode.busy });
    await expect(f.harness.template("review")).rejects.toMatchObject({ code: HarnessErrorCode.busy });
    await expect(f.harness.promptTemplate("review")).rejects.toMatchObject({ code: HarnessErrorCode.busy });
    release.open();
    await run;
    expect(f.harness.phase).toBe("idle");
    expect(records(f, "rein.skill")).toHaveLength(1);
  });

  it("an unknown name rejects with invalid_argument before taking the phase (no event, nothing written)", async () => {
    const f = fixture({ skills: [skill("deploy")] });
    await expect(f.harness.skill("nope")).rejects.toMatchObject({ code: HarnessErrorCode.invalidArgument });
    await expect(f.harness.template("nope")).rejects.toMatchObject({
      code: HarnessErrorCode.invalidArgument,
    });
    expect(f.types()).toEqual([]);
    expect(f.session.entries()).toEqual([]);
  });

  it("consume the next-turn queue: queued context comes before the invocation's message", async () => {
    const f = fixture({ skills: [skill("deploy")], templates: [review] });
    f.harness.nextTurn("context for next time");
    f.scripted.script([reply("one"), reply("two")]);
    await f.harness.skill("deploy", "prod");
    expect(f.harness.queued("nextTurn")).toBe(0);
    const texts = userTexts(f);
    expect(texts[0]).toBe("context for next time");
    expect(texts[1]).toContain("Target: prod");
    f.harness.nextTurn("more context");
    await f.harness.template("review", ["a", "b"]);
    expect(userTexts(f).slice(2)).toEqual(["more context", "Review a for b."]);
    expect(f.harness.queued("nextTurn")).toBe(0);
  });

  it("setSkills / setTemplates check their values like the constructor does", async () => {
    const f = fixture();
    expect(() => f.harness.setSkills([skill("Bad_Name")])).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => f.harness.setSkills([skill("a"), skill("a")])).toThrow(/duplicate skill name "a"/);
    expect(() => f.harness.setTemplates([{ ...review, sha256: "x" }])).toThrow(/sha256/);
    expect(() => fixture({ skills: [{ ...skill("a"), description: " " }] })).toThrow(/options\.skills\[0\]/);
    f.harness.setSkills([skill("a")]);
    expect(f.harness.skills.map((s) => s.name)).toEqual(["a"]);
    await f.harness.waitForIdle();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(f.events).toEqual([{ type: "config_change", key: "skills", pending: false }]);
  });
});

describe("skills in the turn snapshot and the hooks", () => {
  it("a running turn keeps its snapshot's skills; the next turn sees the new list", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], skills: [skill("first")] });
    const seen: string[][] = [];
    f.scripted.script([
      () => {
        seen.push((f.harness.snapshot?.skills ?? []).map((s) => s.name));
        f.harness.setSkills([skill("second")]);
        seen.push((f.harness.snapshot?.skills ?? []).map((s) => s.name));
        return callTools(["echo", { text: "x" }]);
      },
      () => {
        seen.push((f.harness.snapshot?.skills ?? []).map((s) => s.name));
        return reply("done");
      },
    ]);
    await f.harness.prompt("go");
    expect(seen).toEqual([["first"], ["first"], ["second"]]);
  });

  it("beforeRun and beforeRequest taps see the skills and templates of the live config", async () => {
    const f = fixture({ skills: [skill("deploy")], templates: [review] });
    const seen: string[] = [];
    f.harness.hooks.beforeRun.tapPromise("watch", async (payload, context) => {
      seen.push(
        `run:${context.config.skills.map((s) => s.name)}:${context.config.templates.map((t) => t.name)}`,
      );
      return payload;
    });
    f.harness.hooks.beforeRequest.tapPromise("watch", async (payload, context) => {
      seen.push(`request:${context.config.skills.map((s) => s.name)}`);
      return payload;
    });
    f.scripted.script([reply("done")]);
    await f.harness.skill("deploy");
    expect(seen).toEqual(["run:deploy:review", "request:deploy"]);
  });

  it("a system prompt function gets the skills, so a catalog follows setSkills", async () => {
    const f = fixture({
      skills: [skill("deploy")],
      systemPrompt: ({ skills }) => `skills: ${skills.map((s) => s.name).join(",")}`,
    });
    f.scripted.script([reply("a"), reply("b")]);
    await f.harness.prompt("go");
    f.harness.setSkills([skill("deploy"), skill("lint")]);
    await f.harness.prompt("again");
    expect(f.scripted.requests.map((r) => r.context.systemPrompt)).toEqual([
      "skills: deploy",
      "skills: deploy,lint",
    ]);
  });
});

describe("allowed-tools narrows the following turns, never widens", () => {
  it("the model loads a skill through the skill tool; the next turn keeps only its allowed tools and refuses a call it excludes", async () => {
    const echo = echoTool();
    const ran: string[] = [];
    const f = fixture({ skills: [skill("careful", { allowedTools: ["Echo", "Bash(git:*)"] })] });
    f.harness.setTools([echo.tool, otherTool(ran), createSkillTool(f.harness)]);
    const active: (readonly string[] | undefined)[] = [];
    f.scripted.script([
      () => {
        active.push(f.harness.snapshot?.activeToolNames);
        return callTools(["skill", { name: "careful", arguments: "now" }]);
      },
      () => {
        active.push(f.harness.snapshot?.activeToolNames);
        return callTools(["other", {}], ["echo", { text: "allowed" }]);
      },
      reply("done"),
    ]);
    await f.harness.prompt("go");
    expect(active).toEqual([["echo", "other", "skill"], ["echo"]]);
    expect(ran).toEqual([]);
    expect(echo.calls.map((c) => c.args.text)).toEqual(["allowed"]);
    const results = f.messages().filter((m) => m.role === "toolResult");
    const skillResult = results[0] as { content: { text: string }[]; isError?: boolean };
    expect(skillResult.isError).toBe(false);
    expect(skillResult.content[0]?.text).toContain("Do careful carefully. Target: now");
    const refused = results.find((m) => (m as { toolName?: string }).toolName === "other") as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toMatch(/not available in this turn/);
    expect(records(f, "rein.skill")).toEqual([
      {
        name: "careful",
        path: "/skills/careful/SKILL.md",
        sha256: skill("careful").sha256,
        args: ["now"],
        via: "tool",
        runId: expect.any(String),
        allowedTools: ["Echo", "Bash(git:*)"],
      },
    ]);
    // The narrowing is the run's: the next run starts with every tool again.
    f.scripted.script([
      () => {
        active.push(f.harness.snapshot?.activeToolNames);
        return reply("fresh");
      },
    ]);
    await f.harness.prompt("next");
    expect(active[2]).toEqual(["echo", "other", "skill"]);
  });

  it("skill() narrows from the first turn; an allowed tool a gate denies stays denied", async () => {
    const echo = echoTool();
    const ran: string[] = [];
    const f = fixture({
      tools: [echo.tool, otherTool(ran)],
      skills: [skill("careful", { allowedTools: ["echo", "other"] })],
    });
    f.harness.setActiveTools(["echo"]);
    f.harness.hooks.toolGate.tapPromise("policy", async (call) =>
      call.name === "echo" ? { decision: "deny", reason: "echo is off limits" } : undefined,
    );
    const active: (readonly string[] | undefined)[] = [];
    f.scripted.script([
      () => {
        active.push(f.harness.snapshot?.activeToolNames);
        return callTools(["echo", { text: "x" }]);
      },
      reply("done"),
    ]);
    await f.harness.skill("careful");
    // `other` is inactive in the config: allowed-tools cannot make it active.
    expect(active).toEqual([["echo"]]);
    expect(echo.calls).toEqual([]);
    const result = f.messages().find((m) => m.role === "toolResult") as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain("echo is off limits");
  });

  it("the skill tool names an unknown skill in an error result the model can read", async () => {
    const f = fixture({ skills: [skill("deploy")] });
    f.harness.setTools([createSkillTool(f.harness)]);
    f.scripted.script([callTools(["skill", { name: "nope" }]), reply("done")]);
    await f.harness.prompt("go");
    const result = f.messages().find((m) => m.role === "toolResult") as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain('no skill "nope" (skills: deploy)');
    expect(() => f.harness.activateSkill("deploy")).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });

  it("a parked run resumed after its approval keeps the skill's narrowing (recorded again under the new run)", async () => {
    const echo = echoTool();
    const ran: string[] = [];
    const f = fixture({
      tools: [echo.tool, otherTool(ran)],
      skills: [skill("careful", { allowedTools: ["echo"] })],
      onUnanswered: "park",
    });
    f.harness.hooks.toolGate.tapPromise("asker", async (call) =>
      call.name === "echo" ? { decision: "ask", reason: "a person decides" } : undefined,
    );
    f.scripted.script([callTools(["echo", { text: "x" }])]);
    const parked = await f.harness.skill("careful");
    expect(parked.status).toBe("parked");
    const approval = parked.parked?.[0]?.approvalId as string;
    resolveApproval(f.session, approval, { decision: "allow", by: "person:test", reason: "fine" });
    const active: (readonly string[] | undefined)[] = [];
    f.scripted.script([
      () => {
        active.push(f.harness.snapshot?.activeToolNames);
        return callTools(["other", {}]);
      },
      reply("done"),
    ]);
    const resumed = await f.harness.resume();
    expect(resumed.status).toBe("completed");
    expect(echo.calls.map((c) => c.args.text)).toEqual(["x"]);
    expect(active).toEqual([["echo"]]);
    expect(ran).toEqual([]);
    const resumedRecord = records(f, "rein.skill").find((r) => (r as { via: string }).via === "resume");
    expect(resumedRecord).toMatchObject({ name: "careful", runId: resumed.runId, allowedTools: ["echo"] });
  });
});
