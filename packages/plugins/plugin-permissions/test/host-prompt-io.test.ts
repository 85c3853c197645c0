/**
 * The host prompt IO: a program hosting Rein (the CLI's terminal UI) installs one
 * with `setHostPromptIO`, and every copy of this plugin without an `io` option of
 * its own asks through it: `show` gets the request (with its facts) and the prompt
 * text, the answer comes on its input. A plugin's own `io` still wins; unset, the
 * plugin is back to the process's terminal (here: none, so it denies).
 */
import { EventEmitter } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { PermissionRequest } from "@rein/harness";
import { defineTool, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPermissionsPlugin, type PromptIO, setHostPromptIO } from "../src/index.js";

const ran: string[] = [];
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => {
    ran.push(args.command);
    return { content: [{ type: "text", text: "ok" }] };
  },
});
const call = (command: string) => ({ toolCalls: [{ name: "bash", args: { command } }] });

/** A host IO that answers `answer` to every request it is shown, recording what it saw. */
function host(answer: string) {
  const input = new EventEmitter();
  const shown: { request: PermissionRequest; text: string }[] = [];
  const io: PromptIO = {
    isTTY: true,
    input: input as unknown as PromptIO["input"],
    output: { write: () => true },
    show(request, text) {
      shown.push({ request, text });
      setImmediate(() => input.emit("data", `${answer}\n`));
    },
  };
  return { io, shown };
}

beforeAll(() => {
  process.env.REIN_CONFIG_DIR = mkdtempSync(join(tmpdir(), "rein-config-"));
});
let t: TestHarness | undefined;
afterEach(async () => {
  setHostPromptIO(undefined);
  await t?.dispose();
  t = undefined;
  ran.length = 0;
});

describe("the host prompt IO", () => {
  it("asks through the host: it is shown the request and the text, and its answer decides", async () => {
    const ui = host("y");
    setHostPromptIO(ui.io);
    t = await createTestHarness({
      plugins: [createPermissionsPlugin()],
      tools: [bash],
      script: [call("git push origin main"), "done"],
    });
    expect((await t.prompt("push")).status).toBe("completed");
    expect(ran).toEqual(["git push origin main"]);
    expect(ui.shown).toHaveLength(1);
    const [seen] = ui.shown;
    expect(seen?.request.call).toMatchObject({ name: "bash", args: { command: "git push origin main" } });
    expect(seen?.request.verdict.by).toBe("harness:default");
    expect(seen?.text).toContain("[y] allow once");
    expect(t.decisions()[0]).toMatchObject({ decision: "allow", askedBy: "harness:default" });
  });

  it("a host's n denies; the plugin's own io wins over the host; unset, there is no terminal and it denies", async () => {
    const ui = host("n");
    setHostPromptIO(ui.io);
    t = await createTestHarness({
      plugins: [createPermissionsPlugin()],
      tools: [bash],
      script: [call("rm -rf build"), "done"],
    });
    await t.prompt("clean");
    expect(ran).toEqual([]);
    expect(t.decisions()[0]).toMatchObject({
      decision: "deny",
      reason: expect.stringMatching(/^denied at the prompt/),
    });
    await t.dispose();

    const own = Object.assign(new PassThrough(), { isTTY: true });
    own.write("y\n");
    const output = Object.assign(new PassThrough(), { isTTY: true });
    t = await createTestHarness({
      plugins: [createPermissionsPlugin({ io: { input: own, output } })],
      tools: [bash],
      script: [call("make"), "done"],
    });
    await t.prompt("build");
    expect(ran).toEqual(["make"]);
    expect(ui.shown).toHaveLength(1);
    await t.dispose();

    setHostPromptIO(undefined);
    t = await createTestHarness({
      // The process's own streams: not terminals under the test runner.
      plugins: [createPermissionsPlugin()],
      tools: [bash],
      script: [call("make"), "done"],
    });
    await t.prompt("build");
    expect(t.decisions()[0]).toMatchObject({
      decision: "deny",
      reason: expect.stringContaining("no terminal"),
    });
  });
});
