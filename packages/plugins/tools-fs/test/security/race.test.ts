/**
 * Invariant 3 under attack: a second process swaps a directory inside the root
 * with a symlink to a directory outside it (renameat2 RENAME_EXCHANGE, as fast as
 * it can) while read, write and edit run. Nothing outside may be read, written or
 * created. A control read by path (what the tools did before) shows the race is
 * real: it does see the outside file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { call, fsTools, tempDir, textOf } from "../helpers.js";

const RACER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:
    if libc.renameat2(AT_FDCWD, b"dir", AT_FDCWD, b"swap", RENAME_EXCHANGE) != 0:
        sys.exit("renameat2 failed: errno %d" % ctypes.get_errno())
`;

let racer: ChildProcess | undefined;
afterEach(() => {
  racer?.kill("SIGKILL");
  racer = undefined;
});

function arena() {
  const root = tempDir("rein-race-");
  const outside = tempDir("rein-race-out-");
  mkdirSync(join(root, "dir"));
  writeFileSync(join(root, "dir/file.txt"), "inside\n");
  writeFileSync(join(outside, "file.txt"), "OUTSIDE\n");
  symlinkSync(outside, join(root, "swap"));
  return { root, outside };
}

async function startRacer(root: string): Promise<void> {
  racer = spawn("python3", ["-c", RACER, root], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    racer?.stdout?.once("data", () => resolve());
    racer?.once("exit", (code) => reject(new Error(`racer exited with ${code}`)));
  });
}

const ROUNDS = 400;

describe("a directory swapped for a symlink by a second process (renameat2 RENAME_EXCHANGE)", () => {
  it("read never returns the outside file, though a plain read by path does", async () => {
    const { root } = arena();
    const tools = fsTools();
    await startRacer(root);
    let control = 0;
    let inside = 0;
    for (let i = 0; i < ROUNDS; i++) {
      try {
        if (readFileSync(join(root, "dir/file.txt"), "utf8").includes("OUTSIDE")) control++;
      } catch {}
      const text = textOf(await call(tools.read, { path: "dir/file.txt" }, root));
      expect(text).not.toContain("OUTSIDE");
      if (text === "inside") inside++;
    }
    expect(control, "the race must be real").toBeGreaterThan(0);
    expect(inside, "reads that did not race must still work").toBeGreaterThan(0);
  });

  it("write never creates or writes a file outside", async () => {
    const { root, outside } = arena();
    const tools = fsTools();
    await startRacer(root);
    let written = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const result = await call(tools.write, { path: `dir/new-${i}.txt`, content: "planted\n" }, root);
      if (!result.isError) written++;
      expect(existsSync(join(outside, `new-${i}.txt`)), `round ${i}`).toBe(false);
      await call(tools.write, { path: "dir/file.txt", content: "inside\n" }, root);
      expect(readFileSync(join(outside, "file.txt"), "utf8")).toBe("OUTSIDE\n");
    }
    expect(written).toBeGreaterThan(0);
  });

  it("edit never changes the outside file", async () => {
    const { root, outside } = arena();
    const tools = fsTools();
    await startRacer(root);
    for (let i = 0; i < ROUNDS; i++) {
      await call(tools.edit, { path: "dir/file.txt", oldText: "UTSIDE", newText: "WNED" }, root);
      expect(readFileSync(join(outside, "file.txt"), "utf8")).toBe("OUTSIDE\n");
    }
  });
});
