/**
 * Red-team table for the hook daemon's trust boundary (hook/daemon-protocol.ts,
 * hook/pinned-project.ts): which process state a warm daemon may answer for, which
 * files the client trusts as its socket and token, which replies it takes. Each row
 * is an attack tried against what landed in session 7, and held (or was fixed here:
 * the pinned project, and the real path a pinned daemon searches from).
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answerOf,
  daemonPaths,
  fingerprint,
  isPrivate,
  type ProcessState,
  privateDir,
} from "../../src/hook/daemon-protocol.js";
import { configSearchDir, pinnedProject } from "../../src/hook/pinned-project.js";

const BASE: ProcessState = {
  execPath: "/usr/bin/node",
  execArgv: ["--liftoff-only"],
  script: "/opt/rein/bin/rein-hook.js",
  cwd: "/work/project",
  argv: ["hook", "claude-code", "--project", "/work/project"],
  eventCwd: "/work/project",
  uid: 1000,
  env: { PATH: "/usr/bin", HOME: "/home/u" },
};

/** [attack, a state the attacker can reach]: each must get another daemon (another fingerprint). */
const OTHER_STATES: [string, ProcessState][] = [
  [
    "another pinned project on the command line",
    { ...BASE, argv: ["hook", "claude-code", "--project", "/work/other"] },
  ],
  ["no pin on the command line", { ...BASE, argv: ["hook", "claude-code"] }],
  [
    "$CLAUDE_PROJECT_DIR set (a --user install's pin)",
    { ...BASE, env: { ...BASE.env, CLAUDE_PROJECT_DIR: "/work/x" } },
  ],
  ["$CLAUDE_PROJECT_DIR changed", { ...BASE, env: { ...BASE.env, CLAUDE_PROJECT_DIR: "/work/y" } }],
  [
    "REIN_CONFIG_DIR pointing at another user layer",
    { ...BASE, env: { ...BASE.env, REIN_CONFIG_DIR: "/tmp/c" } },
  ],
  [
    "REIN_MANAGED_CONFIG dropped or moved",
    { ...BASE, env: { ...BASE.env, REIN_MANAGED_CONFIG: "/tmp/none" } },
  ],
  ["NODE_OPTIONS adding a preload", { ...BASE, env: { ...BASE.env, NODE_OPTIONS: "--import /tmp/x.mjs" } }],
  ["an empty variable is still a variable", { ...BASE, env: { ...BASE.env, REIN_TRUST_PROJECT: "" } }],
  ["the event in another directory", { ...BASE, eventCwd: "/tmp" }],
  ["the hook process in another directory", { ...BASE, cwd: "/tmp" }],
  ["another user", { ...BASE, uid: 1001 }],
  ["another Node", { ...BASE, execPath: "/tmp/node" }],
  ["Node flags changed", { ...BASE, execArgv: [] }],
  ["another client script", { ...BASE, script: "/tmp/rein-hook.js" }],
  // Framing: a naive concatenation would make these equal.
  ["argv words joined differently", { ...BASE, argv: ["hook claude-code", "--project", "/work/project"] }],
  [
    "a word moved between argv and the event cwd",
    { ...BASE, argv: [...BASE.argv, "/work/project"], eventCwd: "" },
  ],
  ["a variable's value moved into its name", { ...BASE, env: { PATH: "/usr/bin", "HOME=/home/u": "" } }],
  ["cwd and event cwd swapped", { ...BASE, cwd: "/work/project/x", eventCwd: "/work/project" }],
];

describe("a daemon answers only for the exact process state it was started with", () => {
  const base = fingerprint(BASE);
  for (const [attack, state] of OTHER_STATES) {
    it(`${attack}: another fingerprint`, () => {
      expect(fingerprint(state)).not.toBe(base);
    });
  }
  it("the order of variables does not make another daemon (the same state)", () => {
    expect(fingerprint({ ...BASE, env: { HOME: "/home/u", PATH: "/usr/bin" } })).toBe(base);
  });
  it("the socket name is three seeded FNV-1a passes over the state (the one-loop form computes the same)", () => {
    const threePasses = (text: string) => {
      let out = "";
      for (const seed of [0x811c9dc5, 0x01000193, 0x9e3779b9]) {
        let hash = seed >>> 0;
        for (let i = 0; i < text.length; i++) {
          hash ^= text.charCodeAt(i);
          hash = Math.imul(hash, 0x01000193) >>> 0;
        }
        out += hash.toString(16).padStart(8, "0");
      }
      return out;
    };
    for (const text of ["", "a", "é ☃ \u{1f600}", JSON.stringify(BASE).repeat(50)])
      expect(fingerprint(text)).toBe(threePasses(text));
    expect(fingerprint("")).toBe("811c9dc5010001939e3779b9");
  });
});

let dir = "";
let server: Server | undefined;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-daemon-attacks-")));
  chmodSync(dir, 0o700);
  server = createServer();
  await new Promise<void>((resolve) => server?.listen(join(dir, "real.sock"), resolve));
});
afterAll(() => server?.close());

describe("the client trusts only this user's private files as the daemon's socket and token", () => {
  it("a socket open to others is not used", () => {
    const socket = join(dir, "real.sock");
    chmodSync(socket, 0o666);
    expect(isPrivate(socket, "socket")).toBe(false);
    chmodSync(socket, 0o600);
    expect(isPrivate(socket, "socket")).toBe(true);
  });
  it("a symlink to a private socket (planted in the daemon folder) is not a socket", () => {
    const link = join(dir, "link.sock");
    symlinkSync(join(dir, "real.sock"), link);
    expect(isPrivate(link, "socket")).toBe(false);
  });
  it("a token readable by others, or a folder where the token should be, is not a token", () => {
    const token = join(dir, "a.token");
    writeFileSync(token, "x\n", { mode: 0o644 });
    expect(isPrivate(token, "file")).toBe(false);
    mkdirSync(join(dir, "b.token"), { mode: 0o700 });
    expect(isPrivate(join(dir, "b.token"), "file")).toBe(false);
  });
  it("a daemon folder open to others, or a symlink to a private one, is not used", () => {
    const open = join(dir, "open");
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o755);
    expect(privateDir(open)).toBeUndefined();
    const linked = join(dir, "linked");
    symlinkSync(dir, linked);
    expect(privateDir(linked)).toBeUndefined();
  });
  it("a socket path too long to bind everywhere gives no daemon (the in-process path), never a truncated one", () => {
    expect(daemonPaths({ REIN_CONFIG_DIR: join("/tmp", "x".repeat(100)) }, "f".repeat(64))).toBeUndefined();
  });
});

describe("the client takes only a complete, well-formed answer", () => {
  const REPLIES: [string, unknown][] = [
    ["exit 3 (Codex runs the call on any exit but 0 and 2)", { v: 1, exitCode: 3, stdout: "", stderr: "" }],
    ["an exit code as a string", { v: 1, exitCode: "2", stdout: "", stderr: "" }],
    ["no stderr", { v: 1, exitCode: 2, stdout: "" }],
    ["stdout not a string", { v: 1, exitCode: 0, stdout: { hookSpecificOutput: {} }, stderr: "" }],
    ["another protocol version", { v: 2, exitCode: 0, stdout: "", stderr: "" }],
    ["a refusal", { v: 1, refused: "stopping" }],
    ["not an object", "allow"],
    ["null", null],
  ];
  for (const [attack, reply] of REPLIES) {
    it(`${attack}: not an answer (the client decides in process)`, () => {
      expect(answerOf(reply)).toBeUndefined();
    });
  }
  it("control: a well-formed answer is taken as it is", () => {
    expect(answerOf({ v: 1, exitCode: 2, stdout: "", stderr: "no" })).toEqual({
      exitCode: 2,
      stdout: "",
      stderr: "no",
    });
  });
});

describe("the pinned project cannot be moved by the model", () => {
  it("a relative pin, a pin that is a file, or a missing one is an error, never the event's cwd", () => {
    const file = join(dir, "a.token");
    for (const pin of [".", "project", file, join(dir, "gone")])
      expect(() => pinnedProject("claude-code", pin, {})).toThrow();
    expect(() => pinnedProject("claude-code", undefined, { CLAUDE_PROJECT_DIR: "relative" })).toThrow();
  });
  it("Codex has no project variable: a $CLAUDE_PROJECT_DIR in its env pins nothing", () => {
    expect(pinnedProject("codex", undefined, { CLAUDE_PROJECT_DIR: dir })).toBeUndefined();
  });
  it("a folder swapped for a symlink into or out of the project changes where the config is searched (the daemon re-checks before each decision)", () => {
    const project = join(dir, "project");
    const outside = join(dir, "outside");
    mkdirSync(join(project, "src"), { recursive: true });
    mkdirSync(outside);
    const cwd = join(dir, "work");
    symlinkSync(outside, cwd);
    expect(configSearchDir(project, cwd)).toBe(project);
    renameSync(cwd, join(dir, "work-old"));
    symlinkSync(join(project, "src"), cwd);
    expect(configSearchDir(project, cwd)).toBe(join(project, "src"));
  });
});
