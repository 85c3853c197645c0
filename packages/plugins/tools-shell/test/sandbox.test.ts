import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { definePlugin, reinConfigDir } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import shellTools, {
  createBashTool,
  openBashTool,
  releaseRuntimeIfIdle,
  resolveSandboxPolicy,
  SandboxUnavailable,
} from "../src/index.js";
import { withoutNetwork } from "../src/sandbox-runtime.js";
import { isGone, pidsWithMarker, run, start, tempDir, textOf, until } from "./helpers.js";

afterAll(() => releaseRuntimeIfIdle());

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

/** Before this file ran any sandboxed command (the runtime registers its cleanup once per process). */
const SIGNAL_LISTENERS = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")];

describe("sandbox: the host keeps its signals", () => {
  it("adds no SIGINT or SIGTERM listener (a host without one still exits on SIGTERM)", async () => {
    const result = await run("echo ok", tempDir(), {
      sandbox: { network: { allowedDomains: ["example.org"] } },
    });
    expect(textOf(result)).toBe("ok\n\n[exit code 0]");
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(SIGNAL_LISTENERS);
  });
});

describe("sandbox: every process the command started dies with the call", () => {
  const escaper = (marker: string) =>
    // A grandchild in its own session and process group, ignoring SIGTERM and SIGHUP.
    `setsid bash -c "trap '' TERM HUP; exec -a ${marker} sleep 300" < /dev/null > /dev/null 2>&1 & ` +
    `nohup bash -c "exec -a ${marker} sleep 300" > /dev/null 2>&1 & echo ready; wait`;

  for (const stop of ["abort", "timeout"] as const) {
    it(`on ${stop}, setsid and nohup grandchildren are dead (checked by host pid in /proc)`, async () => {
      const marker = `rein-escaper-${stop}-${process.pid}`;
      const running = start(
        escaper(marker),
        tempDir(),
        { killGraceMs: 300 },
        stop === "timeout" ? { timeout: 2 } : {},
      );
      await until(() => pidsWithMarker(marker).length === 2, "both grandchildren running");
      const pids = pidsWithMarker(marker);
      for (const pid of pids) expect(isGone(pid)).toBe(false);
      if (stop === "abort") running.controller.abort();
      const result = await running.result;
      await until(() => pids.every(isGone), "the grandchildren are gone");
      expect(pids.every(isGone)).toBe(true);
      expect(result.details).toMatchObject(stop === "abort" ? { aborted: true } : { timedOut: true });
      expect(textOf(result)).toMatch(
        /the command and every process it started were killed \(sandbox process namespace\)\]$/,
      );
    });
  }

  it("a background job does not outlive the command", async () => {
    const marker = `rein-background-${process.pid}`;
    const result = await run(`setsid bash -c "exec -a ${marker} sleep 300" & echo started`, tempDir());
    expect(textOf(result)).toBe("started\n\n[exit code 0]");
    await until(() => pidsWithMarker(marker).length === 0, "the background job is gone");
  });
});

describe("sandbox: fails closed", () => {
  it("when bwrap is missing: an error that says what to install and how to opt out; nothing runs", async () => {
    const cwd = tempDir();
    const result = await run("touch ran", cwd, { sandbox: { bwrapPath: "/nonexistent/bwrap" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("the sandbox cannot start");
    expect(textOf(result)).toContain("/nonexistent/bwrap");
    expect(textOf(result)).toContain("apt-get install bubblewrap socat");
    expect(textOf(result)).toContain('sandbox: { mode: "off" }');
    expect(textOf(result)).toContain("The command was not run.");
    expect(existsSync(join(cwd, "ran"))).toBe(false);
  });

  it("when PATH has no bwrap", async () => {
    await releaseRuntimeIfIdle();
    const cwd = tempDir();
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const result = await run("touch ran", cwd, {
        sandbox: { network: { allowedDomains: ["example.org"] } },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/the sandbox cannot start: .*(bwrap|bubblewrap)/);
      expect(existsSync(join(cwd, "ran"))).toBe(false);
    } finally {
      process.env.PATH = path;
    }
  });

  it("a bare tool refuses dangerouslyDisableSandbox: nobody could be asked", async () => {
    const cwd = tempDir();
    const tool = createBashTool();
    const result = await tool.execute(
      { command: "touch ran", dangerouslyDisableSandbox: true },
      {
        signal: new AbortController().signal,
        update: () => undefined,
        cwd,
        sessionId: "s",
        toolCallId: "c",
        facts: {},
      },
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("dangerouslyDisableSandbox is refused");
    expect(existsSync(join(cwd, "ran"))).toBe(false);
  });
});

describe("sandbox: the unsandboxed escape needs an answered ask", () => {
  const escapeCall = (outside: string) => ({
    name: "bash",
    args: { command: `echo out > ${outside}/escaped`, dangerouslyDisableSandbox: true },
  });

  it("facts say which boundary a call runs in", async () => {
    const tool = createBashTool();
    const place = { cwd: "/", sessionId: "s" };
    expect(await tool.inspect?.({ command: "ls" }, place)).toMatchObject({
      sandbox: { mode: "workspace-write", unsandboxedRequested: false },
    });
    expect(await tool.inspect?.({ command: "ls", dangerouslyDisableSandbox: true }, place)).toMatchObject({
      sandbox: { mode: "workspace-write", unsandboxedRequested: true },
    });
    const off = createBashTool({ sandbox: { mode: "off" } });
    expect(await off.inspect?.({ command: "ls" }, place)).toMatchObject({
      sandbox: { mode: "off", unsandboxedRequested: false },
    });
  });

  it("is denied when nobody answers, and nothing runs", async () => {
    const cwd = tempDir();
    const outside = tempDir();
    t = await createTestHarness({
      plugins: [shellTools],
      config: { cwd },
      script: [{ toolCalls: [escapeCall(outside)] }, "ok"],
    });
    await t.prompt("go");
    const result = t.messages().find((message) => message.role === "toolResult");
    expect(result).toMatchObject({ isError: true });
    expect(existsSync(join(outside, "escaped"))).toBe(false);
    expect(t.eventsOf("tool_decision")).toMatchObject([
      { toolName: "bash", decision: "deny", by: "@rein/tools-shell:unsandboxed" },
    ]);
  });

  it("runs unsandboxed when a person answers allow, and the sandboxed write is refused otherwise", async () => {
    const cwd = tempDir();
    const outside = tempDir();
    const asked: unknown[] = [];
    const person = definePlugin({
      name: "person",
      setup(rein) {
        rein.hooks.permissionAsk.tap("person", (request) => {
          asked.push(request.call.facts.sandbox);
          return { decision: "allow", reason: "I read it" };
        });
      },
    });
    t = await createTestHarness({
      plugins: [shellTools, person],
      config: { cwd },
      script: [
        { toolCalls: [{ name: "bash", args: { command: `echo in > ${outside}/sandboxed; true` } }] },
        { toolCalls: [escapeCall(outside)] },
        "ok",
      ],
    });
    await t.prompt("go");
    expect(existsSync(join(outside, "sandboxed"))).toBe(false);
    expect(readFileSync(join(outside, "escaped"), "utf8")).toBe("out\n");
    expect(asked).toEqual([{ mode: "workspace-write", unsandboxedRequested: true }]);
    expect(t.eventsOf("tool_decision").at(-1)).toMatchObject({
      decision: "allow",
      by: "person",
      askedBy: "@rein/tools-shell:unsandboxed",
    });
    const results = t.messages().filter((message) => message.role === "toolResult");
    expect(results[1]).toMatchObject({
      details: { sandbox: { mode: "workspace-write", unsandboxed: true } },
    });
  });
});

describe("sandbox: temp files", () => {
  it("gives the command a private, writable TMPDIR outside the root", async () => {
    const cwd = tempDir();
    const result = await run('echo "$TMPDIR"; echo x > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"', cwd);
    const [dir, content] = textOf(result).split("\n");
    expect(content).toBe("x");
    expect(dir?.startsWith(cwd)).toBe(false);
    expect(statSync(dir as string).mode & 0o777).toBe(0o700);
  });

  it("keeps the full output private (0700 dir, 0600 file), capped, masked, and removes it on dispose", async () => {
    const handle = openBashTool({
      outputFile: { maxBytes: 4000, mask: [{ name: "token", pattern: "sk-[a-z0-9]{8}" }] },
    });
    const cwd = tempDir();
    const result = await handle.tool.execute(
      { command: "echo sk-abcdef12; seq 1 5000" },
      {
        signal: new AbortController().signal,
        update: () => undefined,
        cwd,
        sessionId: "s",
        toolCallId: "c",
        facts: {},
      },
    );
    const path = result.details?.fullOutputPath as string;
    expect(path.startsWith(cwd)).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    const kept = readFileSync(path, "utf8");
    expect(kept.startsWith("[REDACTED:token]\n1\n2\n")).toBe(true);
    expect(kept).not.toContain("sk-abcdef12");
    expect(kept).toMatch(/\[\.\.\. output file capped at 3\.9 KB; .* not kept \.\.\.\]\n$/);
    expect(Buffer.byteLength(kept)).toBeLessThan(4200);
    handle.dispose();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(dirname(path))).toBe(false);
  });

  it("a sandboxed command reads its own kept output, never another tool's", async () => {
    const mine = openBashTool();
    const other = openBashTool({ sandbox: { mode: "off" } });
    const cwd = tempDir();
    const call = (tool: typeof mine.tool, command: string) =>
      tool.execute(
        { command },
        {
          signal: new AbortController().signal,
          update: () => undefined,
          cwd,
          sessionId: "s",
          toolCallId: "c",
          facts: {},
        },
      );
    try {
      const own = (await call(mine.tool, "seq 1 5000")).details?.fullOutputPath as string;
      const foreign = (await call(other.tool, "echo other-session-secret; seq 1 5000")).details
        ?.fullOutputPath as string;
      expect(textOf(await call(mine.tool, `tail -n 1 ${own}`))).toBe("5000\n\n[exit code 0]");
      expect(textOf(await call(mine.tool, `head -n 1 ${foreign}`))).not.toContain("other-session-secret");
      // The other tool's directory does not even exist inside this sandbox.
      expect((await call(mine.tool, `ls ${dirname(foreign)}`)).isError).toBe(true);
      const listing = textOf(await call(mine.tool, `ls -a ${dirname(dirname(foreign))}`));
      expect(listing).not.toContain(basename(dirname(foreign)));
      expect(listing).toContain(basename(dirname(own)));
    } finally {
      mine.dispose();
      other.dispose();
    }
  });

  it("the plugin removes its kept files when it is disposed", async () => {
    const cwd = tempDir();
    t = await createTestHarness({
      plugins: [shellTools],
      config: { cwd },
      script: [{ toolCalls: [{ name: "bash", args: { command: "seq 1 5000" } }] }, "ok"],
    });
    await t.prompt("go");
    const result = t.messages().find((message) => message.role === "toolResult") as {
      details?: { fullOutputPath?: string };
    };
    const path = result.details?.fullOutputPath as string;
    expect(existsSync(path)).toBe(true);
    await t.dispose();
    t = undefined;
    expect(existsSync(path)).toBe(false);
  });
});

describe("sandbox: policy", () => {
  it("defaults: write the root and the private temp dir, deny reading credential stores, no network", () => {
    const root = tempDir();
    const policy = resolveSandboxPolicy({}, { root, cwd: root, privateTmp: "/tmp/private" });
    expect(policy).toMatchObject({ mode: "workspace-write", allowedDomains: [], deniedDomains: [] });
    expect(policy?.allowWrite).toEqual(["/tmp/private", root]);
    for (const store of [".ssh", ".aws", ".gnupg", ".config/rein", ".netrc", ".docker/config.json"]) {
      expect(policy?.denyRead).toContain(join(homedir(), store));
    }
    expect(policy?.denyWrite).toContain(join(root, ".rein"));
  });

  it("read-only writes only the private temp dir; off has no policy; relative paths are from the root", () => {
    const root = tempDir();
    const where = { root, cwd: root, privateTmp: "/tmp/private" };
    expect(resolveSandboxPolicy({ mode: "read-only" }, where)?.allowWrite).toEqual(["/tmp/private"]);
    expect(resolveSandboxPolicy({ mode: "off" }, where)).toBeUndefined();
    const custom = resolveSandboxPolicy(
      { filesystem: { allowWrite: ["../cache"], denyRead: ["secrets"] } },
      where,
    );
    expect(custom?.allowWrite).toContain(join(dirname(root), "cache"));
    expect(custom?.denyRead).toEqual([
      join(root, "secrets"),
      join(tmpdir(), `rein-bash-${process.getuid?.()}`),
      reinConfigDir(),
    ]);
  });

  it("refuses a runtime bwrap command it cannot add network isolation to", () => {
    expect(withoutNetwork("bwrap --new-session --die-with-parent --ro-bind / / -- true")).toBe(
      "bwrap --new-session --die-with-parent --unshare-net --ro-bind / / -- true",
    );
    for (const odd of [
      "bwrap --ro-bind / / -- true",
      "env X=1 bwrap --new-session --die-with-parent -- true",
    ]) {
      expect(() => withoutNetwork(odd)).toThrow(SandboxUnavailable);
    }
  });
});
