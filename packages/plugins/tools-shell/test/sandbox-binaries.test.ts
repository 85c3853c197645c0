/**
 * The sandbox's programs are found the way `which` finds them, without spawning it:
 * the first absolute PATH entry holding an executable file; relative entries never
 * decide; explicit paths must be absolute and executable.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath, resolveBinaries } from "../src/sandbox-binaries.js";
import { tempDir } from "./helpers.js";

function program(dir: string, name: string, mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, "#!/bin/sh\n");
  chmodSync(file, mode);
  return file;
}

describe("finding the sandbox's programs on PATH", () => {
  it("the first absolute PATH entry with an executable file wins, as which answers", () => {
    const root = tempDir();
    program(join(root, "a"), "bwrap", 0o644);
    const second = program(join(root, "b"), "bwrap");
    program(join(root, "c"), "bwrap");
    mkdirSync(join(root, "d", "bwrap"), { recursive: true });
    const path = [join(root, "d"), join(root, "a"), join(root, "b"), join(root, "c")].join(":");
    expect(findOnPath("bwrap", path)).toBe(second);
  });

  it("a relative PATH entry is never searched, so the working directory cannot supply bwrap", () => {
    const root = tempDir();
    program(join(root, "bin"), "bwrap");
    const cwd = process.cwd();
    process.chdir(root);
    try {
      expect(findOnPath("bwrap", "bin::.")).toBeUndefined();
    } finally {
      process.chdir(cwd);
    }
  });

  it("resolves both programs from PATH, or names each one missing", () => {
    const root = tempDir();
    const bwrap = program(join(root, "bin"), "bwrap");
    const socat = program(join(root, "bin"), "socat");
    expect(resolveBinaries({}, join(root, "bin"), "linux")).toEqual({ bwrapPath: bwrap, socatPath: socat });
    expect(resolveBinaries({}, join(root, "none"), "linux")).toEqual({
      problems: ["bubblewrap (bwrap) not found on PATH", "socat not found on PATH"],
    });
  });

  it("on macOS nothing is looked up (Seatbelt needs neither program); a given path is still checked", () => {
    expect(resolveBinaries({}, "", "darwin")).toEqual({ bwrapPath: undefined, socatPath: undefined });
    expect(resolveBinaries({ bwrapPath: "bwrap" }, "", "darwin")).toEqual({
      problems: ["bwrapPath must be an absolute path"],
    });
  });

  it("an explicit path is used as given, and must be absolute and executable", () => {
    const root = tempDir();
    const bwrap = program(join(root, "bin"), "my-bwrap");
    const socat = program(join(root, "bin"), "socat");
    expect(resolveBinaries({ bwrapPath: bwrap }, join(root, "bin"), "linux")).toEqual({
      bwrapPath: bwrap,
      socatPath: socat,
    });
    expect(
      resolveBinaries({ bwrapPath: "bin/my-bwrap", socatPath: join(root, "nope") }, "", "linux"),
    ).toEqual({
      problems: [
        "bwrapPath must be an absolute path",
        `socatPath ${join(root, "nope")} is not an executable file`,
      ],
    });
  });
});
