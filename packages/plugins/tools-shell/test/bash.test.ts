import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isGone, removeLater, run, start, tempDir, textOf, until } from "./helpers.js";

/** Unsandboxed: these pin the process-group behaviour of `mode: "off"` (pids are host pids). */
const OFF = { sandbox: { mode: "off" } } as const;

describe("bash: exit codes and output", () => {
  it("reports a zero exit code with the output, not as an error", async () => {
    const result = await run("echo hello", tempDir());
    expect(result.isError).toBe(false);
    expect(textOf(result)).toBe("hello\n\n[exit code 0]");
    expect(result.details).toMatchObject({ exitCode: 0, timedOut: false, aborted: false, truncated: false });
  });

  it("reports a non-zero exit code in the text and details, as an error", async () => {
    const result = await run("echo partial; echo oops >&2; exit 3", tempDir());
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("partial\noops\n\n[exit code 3]");
    expect(result.details?.exitCode).toBe(3);
  });

  it("says when there was no output", async () => {
    expect(textOf(await run("true", tempDir()))).toBe("(no output)\n\n[exit code 0]");
  });

  it("reports a command killed by a signal", async () => {
    const result = await run("kill -KILL $$", tempDir(), OFF);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("(no output)\n\n[killed by signal SIGKILL]");
    expect(result.details).toMatchObject({ exitCode: null, signal: "SIGKILL" });
  });

  it("runs in the working directory, or the configured root below it", async () => {
    const cwd = tempDir();
    expect(textOf(await run("pwd; mkdir sub", cwd))).toBe(`${cwd}\n\n[exit code 0]`);
    expect(textOf(await run("pwd", cwd, { root: "sub" }))).toBe(`${join(cwd, "sub")}\n\n[exit code 0]`);
    const missing = await run("pwd", cwd, { root: "nope" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe(`working directory ${join(cwd, "nope")} does not exist`);
  });

  it("passes extra environment variables and gives the command no stdin", async () => {
    const result = await run('echo "$GREETING"; cat; echo "stdin closed"', tempDir(), {
      env: { GREETING: "hi there" },
    });
    expect(textOf(result)).toBe("hi there\nstdin closed\n\n[exit code 0]");
  });

  it("does not wait for a background process that keeps the output open", async () => {
    const cwd = tempDir();
    const result = await run("sleep 30 & echo $! > bg.pid; echo started", cwd, OFF);
    const pid = Number(readFileSync(join(cwd, "bg.pid"), "utf8"));
    try {
      expect(textOf(result)).toBe("started\n\n[exit code 0]");
      expect(isGone(pid)).toBe(false); // still running: the result did not wait for it
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });
});

describe("bash: stopping commands", () => {
  it("never runs a command when the call was aborted before it started", async () => {
    const cwd = tempDir();
    const controller = new AbortController();
    controller.abort();
    const result = await start("touch ran.txt", cwd, {}, { controller }).result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("aborted before start; the command was not run");
    expect(existsSync(join(cwd, "ran.txt"))).toBe(false);
  });

  it("times out a long command with a per-call timeout and reports it as an error", async () => {
    const result = await start("echo before; sleep 10", tempDir(), OFF, { timeout: 1 }).result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "before\n\n[timed out after 1 s; the command and its child processes were killed]",
    );
    expect(result.details).toMatchObject({ timedOut: true, aborted: false, exitCode: null });
  });

  it("uses the timeout option when the call sets none", async () => {
    const result = await run("sleep 10", tempDir(), { timeout: 0.5 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("[timed out after 0.5 s;");
  });

  it("on abort kills the whole process group, even children that ignore SIGTERM", async () => {
    const cwd = tempDir();
    const command = [
      "trap '' TERM", // the shell and everything it starts ignore SIGTERM
      "echo $$ > pids",
      "sleep 30 &",
      "echo $! >> pids",
      "(trap '' TERM; sleep 30) &",
      "echo $! >> pids",
      "echo ready",
      "wait",
    ].join("\n");
    const running = start(command, cwd, { ...OFF, killGraceMs: 300 });
    await until(() => textOf({ content: running.updates.at(-1)?.content ?? [] }).includes("ready"), "ready");
    const pids = readFileSync(join(cwd, "pids"), "utf8").trim().split("\n").map(Number);
    expect(pids).toHaveLength(3);
    for (const pid of pids) expect(isGone(pid), `pid ${pid} before abort`).toBe(false);

    running.controller.abort();
    const result = await running.result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("ready\n\n[aborted; the command and its child processes were killed]");
    expect(result.details).toMatchObject({ aborted: true, timedOut: false, signal: "SIGKILL" });
    // SIGKILL is delivered at once, but the kernel tears the processes down asynchronously.
    await until(() => pids.every(isGone), "the whole process group is gone");
    for (const pid of pids) expect(isGone(pid), `pid ${pid} after abort`).toBe(true);
  });

  it("on abort ends a command that stops on SIGTERM without waiting for the grace period", async () => {
    const cwd = tempDir();
    const running = start("echo $$ > pid; echo go; sleep 30", cwd, { ...OFF, killGraceMs: 60_000 });
    await until(() => running.updates.length > 0, "first output");
    running.controller.abort();
    const result = await running.result; // would hang for a minute if it waited for SIGKILL
    expect(result.details).toMatchObject({ aborted: true, signal: "SIGTERM" });
    expect(isGone(Number(readFileSync(join(cwd, "pid"), "utf8")))).toBe(true);
  });
});

describe("bash: live output", () => {
  it("streams output through ctx.update while the command runs", async () => {
    const running = start("echo tick 1; sleep 0.3; echo tick 2; sleep 0.3; echo tick 3", tempDir(), {
      updateIntervalMs: 50,
    });
    const result = await running.result;
    expect(textOf(result)).toBe("tick 1\ntick 2\ntick 3\n\n[exit code 0]");
    const texts = running.updates.map((update) => textOf(update));
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(texts[0]).toBe("tick 1");
    expect(texts).toContain("tick 1\ntick 2");
    for (const update of running.updates) expect(update.details).toMatchObject({ partial: true });
  });
});

describe("bash: long output", () => {
  it("keeps the head and the tail, notes the cut, and saves the full output to a temp file", async () => {
    const result = await run("seq 1 5000", tempDir());
    const text = textOf(result);
    const path = result.details?.fullOutputPath;
    removeLater(path);
    expect(result.details).toMatchObject({ truncated: true, totalLines: 5000, exitCode: 0 });
    expect(typeof path).toBe("string");
    expect(text).toContain(`Full output (23.3 KB): ${path}`);
    const lines = text.split("\n");
    expect(lines.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    expect(lines[101]).toMatch(
      /^\[\.\.\. output truncated: 4500 lines \(.+\) omitted; showing lines 1-100 and 4601-5000 of 5000\./,
    );
    expect(lines.slice(103, 503)).toEqual(Array.from({ length: 400 }, (_, i) => String(4601 + i)));
    expect(lines.slice(503)).toEqual(["", "[exit code 0]"]);
    expect(lines).not.toContain("101");
    expect(lines).not.toContain("4600");
    const full = readFileSync(path as string, "utf8");
    expect(full).toBe(`${Array.from({ length: 5000 }, (_, i) => i + 1).join("\n")}\n`);
  });

  it("keeps the full output in the file when it is far larger than memory keeps", async () => {
    const result = await run("seq 1 400000", tempDir(), { headLines: 3, tailLines: 2 });
    removeLater(result.details?.fullOutputPath);
    const text = textOf(result);
    expect(text.split("\n").slice(0, 3)).toEqual(["1", "2", "3"]);
    expect(text).toContain("showing lines 1-3 and 399999-400000 of 400000");
    expect(text.endsWith("\n399999\n400000\n\n[exit code 0]")).toBe(true);
    const full = readFileSync(result.details?.fullOutputPath as string, "utf8");
    expect(full.length).toBe(result.details?.totalBytes);
    expect(full.startsWith("1\n2\n3\n")).toBe(true);
    expect(full.endsWith("\n399999\n400000\n")).toBe(true);
    expect(full.split("\n")).toHaveLength(400001);
  });

  it("cuts a single huge line by bytes", async () => {
    const result = await run("head -c 200000 /dev/zero | tr '\\0' x", tempDir(), { maxBytes: 1000 });
    removeLater(result.details?.fullOutputPath);
    const text = textOf(result);
    expect(text).toContain("showing the start and the end of 1 line (long lines cut)");
    expect(text.length).toBeLessThan(2000);
    expect(readFileSync(result.details?.fullOutputPath as string, "utf8")).toBe("x".repeat(200000));
  });
});
