/**
 * The hook daemon's record of the files its answers rest on (watched-files.ts):
 * the modules it loaded are recorded from the process's append-only list, each
 * once, and a module a later decision loads is checked from then on.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WatchedFiles } from "../src/hook/watched-files.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "rein-watched-"));
  dirs.push(dir);
  return dir;
}

describe("WatchedFiles.addLoaded", () => {
  it("records a module appended to the loaded list after an earlier call, and sees it change", () => {
    const dir = folder();
    const first = join(dir, "first.js");
    const later = join(dir, "later.js");
    writeFileSync(first, "1");
    writeFileSync(later, "2");
    const loaded = [first];
    const watched = new WatchedFiles(() => false);
    watched.addLoaded(loaded);
    expect(watched.size).toEqual({ before: 1, after: 0 });
    loaded.push(later);
    watched.addLoaded(loaded);
    expect(watched.size).toEqual({ before: 2, after: 0 });
    writeFileSync(later, "22");
    expect(watched.changed()).toBe(later);
  });

  it("keeps a module's first identity when the list is walked again (a change is not re-recorded)", () => {
    const dir = folder();
    const file = join(dir, "plugin.js");
    writeFileSync(file, "1");
    const loaded = [file];
    const watched = new WatchedFiles(() => false);
    watched.addLoaded(loaded);
    writeFileSync(file, "changed");
    loaded.push(file); // loaded again: the same path, appended a second time
    watched.addLoaded(loaded);
    expect(watched.changed()).toBe(file);
  });

  it("puts Rein's own installed files in the group checked after each answer", () => {
    const dir = folder();
    const own = join(dir, "own.js");
    writeFileSync(own, "1");
    const watched = new WatchedFiles((file) => file === own);
    watched.addLoaded([own]);
    expect(watched.size).toEqual({ before: 0, after: 1 });
    writeFileSync(own, "22");
    expect(watched.changed()).toBeUndefined();
    expect(watched.installChanged()).toBe(own);
  });
});
