/**
 * Paths that Rein or git read as code or config later (invariant 9) are not
 * writable from the sandbox, whether they exist yet or not, and the user's Rein
 * config dir is neither readable nor writable wherever it is configured. Every
 * case runs a real sandboxed bash and checks the host afterwards.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { releaseRuntimeIfIdle } from "../../src/index.js";
import { run, tempDir, textOf } from "../helpers.js";

afterAll(() => releaseRuntimeIfIdle());

let root: string;
let before: string;
beforeEach(() => {
  before = process.cwd();
  root = tempDir();
  process.chdir(root);
});
afterEach(() => process.chdir(before));

const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd: root,
    encoding: "utf8",
  });

describe("Rein's config names are not creatable beside the one that exists", () => {
  it.each([
    ["rein.config.ts beside rein.config.json", "echo 'export default {}' > rein.config.ts"],
    ["rein.config.mjs", "touch rein.config.mjs"],
    ["a .rein-plugins dir", "mkdir -p .rein-plugins && echo x > .rein-plugins/p.ts"],
    ["a .rein dir", "mkdir -p .rein && echo '{}' > .rein/local.json"],
    ["by moving a file into place", "echo x > a.ts; mv a.ts rein.config.js"],
  ])("%s", async (_label, command) => {
    writeFileSync(join(root, "rein.config.json"), "{}\n");
    const result = await run(command, root);
    expect(result.details?.sandbox, textOf(result)).toEqual({ mode: "workspace-write", unsandboxed: false });
    expect(readdirSync(root).sort(), textOf(result)).toEqual(
      ["rein.config.json", ...(command.includes("a.ts") ? ["a.ts"] : [])].sort(),
    );
  });
});

describe(".git: only what git add and commit need is writable", () => {
  it("git add and commit work in the sandbox; config, hooks, commondir, info, modules do not", async () => {
    git("init", "-q");
    writeFileSync(join(root, "a.txt"), "a\n");
    const config = readFileSync(join(root, ".git", "config"), "utf8");
    const result = await run(
      [
        "git -c user.name=t -c user.email=t@t add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && git status --short && echo COMMITTED",
        "echo /tmp/elsewhere > .git/commondir",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
        "mkdir -p .git/modules/x; echo evil > .git/info/attributes",
        "echo 'touch pwned' > .git/hooks/pre-commit",
      ].join("; "),
      root,
    );
    expect(textOf(result)).toContain("COMMITTED");
    expect(textOf(result)).toContain(`Rein removed ${join(root, ".git", "commondir")}`);
    expect(result.isError).toBe(true);
    expect(git("log", "--oneline")).toContain("one");
    expect(existsSync(join(root, ".git", "commondir"))).toBe(false);
    expect(existsSync(join(root, ".git", "modules"))).toBe(false);
    expect(existsSync(join(root, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe(config);
  });

  it("the .git directory cannot be moved away and rebuilt", async () => {
    git("init", "-q");
    const config = readFileSync(join(root, ".git", "config"), "utf8");
    const result = await run(
      "mv .git .git-old; mkdir -p .git; printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .git/config; ls -a",
      root,
    );
    expect(existsSync(join(root, ".git-old")), textOf(result)).toBe(false);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe(config);
  });

  it("a worktree's .git file is read-only, and no .git can be created where none is", async () => {
    const result = await run("echo 'gitdir: /tmp/evil' > .git; git init -q . ; ls -a", root);
    expect(existsSync(join(root, ".git")), textOf(result)).toBe(false);
    writeFileSync(join(root, ".git"), "gitdir: ../main/.git/worktrees/w\n");
    const again = await run(
      "echo 'gitdir: /tmp/evil' > .git; rm -f .git; echo 'gitdir: /tmp/evil' > .git",
      root,
    );
    expect(readFileSync(join(root, ".git"), "utf8"), textOf(again)).toBe(
      "gitdir: ../main/.git/worktrees/w\n",
    );
  });
});

describe("the user's Rein config dir is unreadable and unwritable, wherever it is configured", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ["REIN_CONFIG_DIR", "XDG_CONFIG_HOME"]) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });
  it.each([
    ["REIN_CONFIG_DIR", (dir: string) => ({ REIN_CONFIG_DIR: dir }), (dir: string) => dir],
    ["XDG_CONFIG_HOME", (dir: string) => ({ XDG_CONFIG_HOME: dir }), (dir: string) => join(dir, "rein")],
  ])("%s", async (_label, env, configDir) => {
    const base = tempDir();
    const dir = configDir(base);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "grant-key"), "SECRET-GRANT-KEY\n");
    delete process.env.REIN_CONFIG_DIR;
    Object.assign(process.env, env(base));
    const result = await run(`cat '${dir}/grant-key'; ls '${dir}'; echo forged > '${dir}/trust.json'`, root, {
      sandbox: { filesystem: { denyRead: [], allowWrite: [base] } },
    });
    expect(textOf(result)).not.toContain("SECRET-GRANT-KEY");
    expect(existsSync(join(dir, "trust.json"))).toBe(false);
  });
});

describe("every Rein state folder is unwritable from the sandbox, even inside allowWrite", () => {
  const names = ["REIN_CACHE_DIR", "XDG_CACHE_HOME", "REIN_CONFIG_DIR", "XDG_CONFIG_HOME"];
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });
  // Each: the environment that places the folder (under `base`), and the folder.
  it.each([
    ["Rein's cache ($REIN_CACHE_DIR)", (base: string) => ({ REIN_CACHE_DIR: join(base, "c") }), "c"],
    ["Rein's cache ($XDG_CACHE_HOME/rein)", (base: string) => ({ XDG_CACHE_HOME: base }), "rein"],
    ["its transpile cache", (base: string) => ({ REIN_CACHE_DIR: base }), "jiti"],
    ["the hook daemon's folder", (base: string) => ({ REIN_CONFIG_DIR: base }), "hookd"],
    ["the project's sessions", () => ({}), ".rein/sessions"],
  ])("%s", async (_label, env, folder) => {
    const base = tempDir();
    for (const name of names) delete process.env[name];
    Object.assign(process.env, env(base));
    const dir = folder.startsWith(".rein") ? join(root, folder) : join(base, folder);
    mkdirSync(dir, { recursive: true });
    // The writes a program makes without naming the folder on its command line.
    const result = await run(
      `F='${dir}'; echo x > "$F/planted"; python3 -c "open('$F/by-python', 'w').write('x')"; mkdir "$F/v24"; ls "$F"`,
      root,
      { sandbox: { filesystem: { allowWrite: [base] } } },
    );
    expect(readdirSync(dir), textOf(result)).toEqual([]);
    expect(result.details?.sandbox).toEqual({ mode: "workspace-write", unsandboxed: false });
  });
});
