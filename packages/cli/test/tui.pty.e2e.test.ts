/**
 * The terminal UI of `rein run --chat` on a real pseudo-terminal (tmux, 120×40,
 * colours on), as a person uses it: what is typed is echoed in the editor;
 * the answer's Markdown is rendered (no `##` or `**`, the heading and the code's
 * keywords coloured); an edit asks through the permission dialog (the call, its
 * canonical path, who asks and why, the grant scopes one per line), `y` answers
 * it and the edit's unified diff follows; `/model` switches the model and the
 * status line says so, as it says the context used, the permission mode (and
 * `/mode` changes it) and the sandbox; Ctrl-C twice quits with exit code 0. Also:
 * a one-shot `rein run`, Ctrl-C stopping a running tool, `/model` sending the next
 * prompt to a loopback endpoint, `rein dev` reloading an edited plugin.
 * Each step's screen is saved as HTML and PNG (REIN_SCREENS_DIR, else a temp dir).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import {
  cacheRoot,
  cleanup,
  project,
  REIN_BIN,
  scriptedConfig,
  TOOLS_PLUGIN,
} from "./support/rein-process.js";
import { saveScreen } from "./support/terminal-screen.js";

const plugins = join(dirname(fileURLToPath(import.meta.url)), "../../plugins");
const dist = (name: string) => JSON.stringify(join(plugins, name, "dist/index.js"));
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const name = `rein-tui-${process.pid}`;
const screens = process.env.REIN_SCREENS_DIR ?? mkdtempSync(join(tmpdir(), "rein-screens-"));
mkdirSync(screens, { recursive: true });

afterAll(() => {
  spawnSync("tmux", ["kill-session", "-t", name]);
  cleanup();
});

/** The visible screen: plain text, or with colour escapes (`-e`). */
const screen = (escapes = false) => tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []), "-t", name);
// biome-ignore lint/suspicious/noControlCharactersInRegex: colour escapes are what is checked.
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");

async function waitFor(check: string | RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let shown = "";
  while (Date.now() < deadline) {
    shown = screen();
    if (typeof check === "string" ? shown.includes(check) : check.test(shown)) return shown;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${String(check)}; the screen shows:\n${shown}`);
}
const keys = (...args: string[]) => tmux("send-keys", "-t", name, ...args);
const statusLine = (shown: string) => shown.split("\n").find((line) => line.includes("● ")) ?? "";
const save = (step: string, title: string) => saveScreen(screen(true), join(screens, step), title);

const MARKDOWN = [
  "## Plan",
  "",
  "- **read** the notes",
  "- change line two",
  "",
  "```ts",
  "const answer: number = 42;",
  "function greet(name: string) {",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source the model answers with.
  "  return `hi ${name}`;",
  "}",
  "```",
  "",
  "Done planning.",
].join("\n");

describe.skipIf(!hasTmux)("the terminal UI on a real terminal", { timeout: 120_000 }, () => {
  it("echoes, renders Markdown, asks in a dialog, shows the diff, switches model and mode, and shows them in the status line", async () => {
    const dir = project({
      "notes.txt": "one\ntwo\nthree\n",
      "long.txt": Array.from({ length: 12 }, (_, i) => `row ${i + 1}`).join("\n"),
      ".rein/skills/release-notes/SKILL.md":
        "---\nname: release-notes\ndescription: Writes release notes from the changelog.\n---\n\nRead CHANGELOG.md.\n",
      "rein.config.mjs": `export default {
  model: { script: ${JSON.stringify([
    MARKDOWN,
    { toolCalls: [{ name: "edit", args: { path: "notes.txt", oldText: "two", newText: "TWO (edited)" } }] },
    "Edited **notes.txt**.",
    { toolCalls: [{ name: "read", args: { path: "long.txt" } }] },
    "Read it.",
    { toolCalls: [{ name: "bash", args: { command: "git -C . push origin main && echo done" } }] },
    "Not pushed.",
  ])} },
  plugins: [${dist("tools-fs")}, ${dist("plugin-permissions")}, [${dist("tools-shell")}, { sandbox: { mode: "workspace-write" } }]],
};
`,
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `TERM=xterm-256color ANTHROPIC_API_KEY=sk-test-never-sent REIN_CONFIG_DIR=${JSON.stringify(join(dir, ".config"))} REIN_TRUST_PROJECT=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} run --chat`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    spawnSync("tmux", ["kill-session", "-t", name]);
    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command);

    // The status line: model, context, mode, sandbox.
    let shown = await waitFor("● ready");
    expect(statusLine(shown)).toMatch(
      /faux\/faux-1 · context 0\/128\.0k \(0%\) · mode default · sandbox workspace-write/,
    );

    // Echo: the editor shows what is typed before it is sent.
    keys("-l", "show me the plan");
    shown = await waitFor("show me the plan");
    expect(shown).not.toContain("› show me the plan");
    await save("1-typed", "typing a prompt: echoed in the editor");
    keys("Enter");
    shown = await waitFor("Done planning.");
    expect(shown).toContain("› show me the plan");
    // Markdown rendered: no markers left; the heading and the code keyword are coloured.
    expect(shown).toMatch(/^Plan\s*$/m);
    expect(shown).not.toMatch(/## Plan|\*\*read\*\*/);
    expect(shown).toMatch(/- read the notes/);
    const coloured = screen(true);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour escapes are what is checked.
    expect(coloured).toMatch(/\x1b\[[0-9;]*m+Plan/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the keyword is highlighted.
    expect(coloured).toMatch(/\x1b\[[0-9;]*mconst\x1b/);
    expect(statusLine(shown)).toMatch(/context [1-9][\d.]*k?\/128\.0k/);
    await save("2-markdown", "the answer's Markdown, rendered, code highlighted");

    // Multi-line input (Ctrl-J), then the edit asks: the dialog.
    keys("-l", "please edit");
    keys("C-j");
    keys("-l", "line two of notes.txt");
    keys("Enter");
    shown = await waitFor("Permission needed: edit");
    expect(shown).toContain("› please edit");
    expect(shown).toMatch(/^ {2}line two of notes\.txt/m);
    expect(shown).toMatch(
      new RegExp(`path +${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/notes\\.txt \\(as notes\\.txt\\)`),
    );
    expect(shown).toMatch(/asked by +harness:default/);
    expect(shown).toMatch(/why +edit has risk "write"; the default for write tools is ask/);
    expect(shown).toMatch(/\[y\] allow once\s*$/m);
    expect(shown).toMatch(/\[s\] allow for this session \(edit\(notes\.txt\) only\)\s*$/m);
    expect(shown).toMatch(/\[n\] deny\s*$/m);
    await save("3-permission", "the permission dialog for an edit");
    keys("y");
    shown = await waitFor("Edited notes.txt.");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("one\nTWO (edited)\nthree\n");
    // The diff of the edit, under its call.
    expect(shown).toMatch(/--- a\/notes\.txt\s*\n\s*\+\+\+ b\/notes\.txt\s*\n\s*@@ -1,3 \+1,3 @@/);
    expect(shown).toMatch(/^ {2}-two\s*$/m);
    expect(shown).toMatch(/^ {2}\+TWO \(edited\)\s*$/m);
    expect(shown).toContain("✓ allowed by permissions (asked by harness:default)");
    await save("4-diff", "the edit's unified diff after the dialog");

    // Tool output collapsed to four lines; Ctrl-O expands it.
    keys("-l", "read the long file");
    keys("Enter");
    shown = await waitFor("Read it.");
    expect(shown).toContain("row 4");
    expect(shown).not.toMatch(/row 5\b/);
    expect(shown).toMatch(/… \d+ more lines \(ctrl\+o expands\)/);
    keys("C-o");
    shown = await waitFor("row 12");
    expect(shown).not.toContain("more lines (ctrl+o expands)");
    keys("C-o");
    await waitFor("more lines (ctrl+o expands)");

    // A shell call: the dialog shows the parsed commands and the sandbox; n denies.
    keys("-l", "push it");
    keys("Enter");
    shown = await waitFor("Permission needed: bash");
    expect(shown).toMatch(/command +git -C \. push origin main {2}· {2}echo done/);
    expect(shown).toMatch(/sandbox +workspace-write\s*$/m);
    expect(shown).toMatch(/asked by +harness:default/);
    await save("5-shell-permission", "the dialog for a shell command: parsed commands, sandbox");
    keys("n");
    shown = await waitFor("Not pushed.");
    expect(shown).toMatch(/✗ bash .*git -C \. push/);
    expect(shown).toMatch(/✗ denied by permissions: denied at the prompt/);

    // History: ↑ brings the last prompt back; Ctrl-C clears it.
    keys("Up");
    await waitFor(/─\s*\npush it\s*\n─/);
    keys("C-c");
    // A paste arrives whole (bracketed paste), its lines kept; Ctrl-C clears the editor again.
    tmux("set-buffer", "-b", name, "pasted one\npasted two\npasted three");
    tmux("paste-buffer", "-p", "-b", name, "-t", name);
    await waitFor(/─\s*\npasted one\s*\npasted two\s*\npasted three\s*\n─/);
    keys("C-c");
    await waitFor(/─\s*\n\s*\n─/);

    // /model switches; the status line follows. /mode likewise.
    keys("-l", "/model anthropic/claude-sonnet-4-5");
    keys("Enter");
    shown = await waitFor("✓ model anthropic/claude-sonnet-4-5 (was faux/faux-1)");
    expect(statusLine(shown)).toMatch(/anthropic\/claude-sonnet-4-5 · context [\d.]+k?\/200\.0k/);
    keys("-l", "/mode acceptEdits");
    keys("Enter");
    shown = await waitFor("✓ permission mode acceptEdits");
    expect(statusLine(shown)).toContain("mode acceptEdits · sandbox workspace-write");
    keys("-l", "/cost");
    keys("Enter");
    shown = await waitFor(/session +[\d,]+ in/);
    keys("-l", "/tree");
    keys("Enter");
    shown = await waitFor("◀ leaf");
    keys("-l", "/skills");
    keys("Enter");
    shown = await waitFor(
      /\/release-notes +Writes release notes from the changelog\. +\(project: \.rein\/skills\/release-notes\/SKILL\.md\)/,
    );
    await save("6-model-mode", "after /model, /mode, /cost and /tree: the status line");

    // Ctrl-C twice when idle: quits, exit code 0.
    keys("C-c");
    keys("C-c");
    const deadline = Date.now() + 20_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("0");
    // The transcript stays in the terminal's scrollback after the UI closes.
    const scrollback = plain(tmux("capture-pane", "-p", "-S", "-500", "-t", name));
    expect(scrollback).toContain("Edited notes.txt.");
    expect(scrollback).toContain("› show me the plan");
  });

  it("rein run with a prompt draws the same UI, leaves the transcript in the scrollback and exits with the run's code", async () => {
    const dir = project({
      "rein.config.mjs": `export default { model: { script: [${JSON.stringify("# Hello\n\nA **bold** answer with `code`.")}] } };\n`,
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `TERM=xterm-256color REIN_TRUST_PROJECT=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} run 'say hello'`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    spawnSync("tmux", ["kill-session", "-t", name]);
    tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "20", command);
    const deadline = Date.now() + 20_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("0");
    const shown = plain(tmux("capture-pane", "-p", "-S", "-100", "-t", name));
    expect(shown).toContain("› say hello");
    expect(shown).toMatch(/^Hello\s*$/m);
    expect(shown).toContain("A bold answer with code.");
    expect(shown).not.toContain("**");
    expect(shown).toMatch(/run 4 in · 10 out/);
    // No prices: no cost anywhere, as in the plain last line.
    expect(statusLine(shown)).not.toContain("$");
  });

  it("Ctrl-C stops a running tool (its call gets a result), the chat goes on, and a second Ctrl-C quits", async () => {
    const dir = project({
      "tools.ts": TOOLS_PLUGIN,
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "wait", args: {} }] }, "never reached"],
        'plugins: ["./tools.ts"],',
      ),
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `TERM=xterm-256color REIN_TRUST_PROJECT=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} run --chat`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    spawnSync("tmux", ["kill-session", "-t", name]);
    tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", command);
    await waitFor("● ready");
    keys("-l", "wait for it");
    keys("Enter");
    const deadline = Date.now() + 20_000;
    while (!existsSync(join(dir, "waiting")) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(statusLine(await waitFor("● working"))).toContain("faux/faux-1");
    keys("C-c");
    let shown = await waitFor("● ready");
    expect(shown).toContain("■ stopping… (Ctrl-C again to quit)");
    expect(shown).toMatch(/✗ wait \{\}/);
    expect(shown).toContain("stopped");
    expect(shown).not.toContain("never reached");
    // Still in the chat. `/` completes the commands, with what each does.
    keys("-l", "/mo");
    shown = await waitFor("show or switch the permission mode");
    expect(shown).toContain("show or switch the model");
    // Esc closes the list (given time to be a key of its own, not the start of a sequence).
    keys("Escape");
    await waitFor(/─\s*\n\/mo\s*\n─+\s*\n● ready/);
    keys("C-c");
    await waitFor(/─\s*\n\s*\n─/);
    // A command works; then Ctrl-C twice quits.
    keys("-l", "/session");
    keys("Enter");
    shown = await waitFor(/^[0-9a-f]{8}-[0-9a-f-]{27}\s*$/m);
    keys("C-c");
    keys("C-c");
    const end = Date.now() + 20_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 100));
    // The run was aborted: the chat's status is that of its last run.
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("1");
  });

  it("/model switches where requests go: the next prompt is answered by the chosen endpoint", async () => {
    const server = await startOpenAICompatibleServer([{ text: "Served over **HTTP**." }]);
    try {
      const dir = project({
        "rein.config.mjs": `export default {
  model: { script: ["Scripted hello."] },
  models: [{ id: "local-model", baseUrl: "${server.baseUrl}", api: "openai-completions", contextWindow: 8192 }],
};
`,
      });
      const command = [
        `cd ${JSON.stringify(dir)}`,
        `TERM=xterm-256color REIN_TRUST_PROJECT=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} run --chat`,
        "echo $? > exit-code",
        "sleep 60",
      ].join("; ");
      spawnSync("tmux", ["kill-session", "-t", name]);
      tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", command);
      await waitFor("● ready");
      keys("-l", "hi");
      keys("Enter");
      await waitFor("Scripted hello.");
      keys("-l", "/model local-model");
      keys("Enter");
      let shown = await waitFor("✓ model custom/local-model (was faux/faux-1)");
      expect(statusLine(shown)).toMatch(/custom\/local-model · context \d+\/8\.2k/);
      keys("-l", "and now over http");
      keys("Enter");
      shown = await waitFor("Served over HTTP.");
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]).toMatchObject({ model: "local-model", stream: true });
      const messages = server.requests[0]?.messages as { role: string; content?: unknown }[];
      expect(JSON.stringify(messages)).toContain("and now over http");
      expect(JSON.stringify(messages)).toContain("Scripted hello.");
      keys("C-d");
      const end = Date.now() + 20_000;
      while (!existsSync(join(dir, "exit-code")) && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("0");
    } finally {
      await server.close();
    }
  });

  it("rein dev: a plugin edited while the UI runs is reloaded, and the transcript says so", async () => {
    const greeter = (name: string) =>
      `export default { kind: "rein-plugin", name: ${JSON.stringify(name)}, setup() {} };\n`;
    const dir = project({
      "greeter.ts": greeter("greeter"),
      "rein.config.mjs": `export default { model: { script: ["hello"] }, plugins: ["./greeter.ts"] };\n`,
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `TERM=xterm-256color REIN_TRUST_PROJECT=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} dev`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    spawnSync("tmux", ["kill-session", "-t", name]);
    tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", command);
    await waitFor("● ready");
    writeFileSync(join(dir, "greeter.ts"), greeter("greeter-two"));
    const shown = await waitFor("↻ reloaded: 1 plugin (greeter-two)");
    expect(statusLine(shown)).toContain("faux/faux-1");
    keys("-l", "/exit");
    keys("Enter");
    const end = Date.now() + 20_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("0");
  });
});
