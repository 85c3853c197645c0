/**
 * `JsonlStorage.close()` fsyncs only what is not yet known to be on disk: a run's last
 * save point and its close cost one fsync, not two, and nothing appended after the last
 * completed fsync is ever left unflushed at close.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createSessionHeader, JsonlStorage, type SessionEntry } from "../src/session/index.js";

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-close-sync-"));
  dirs.push(dir);
  return path.join(dir, "s.jsonl");
}
const entry = (id: string, parentId: string | null): SessionEntry =>
  ({
    type: "message",
    id,
    parentId,
    timestamp: 1,
    message: { role: "user", content: id, timestamp: 1 },
  }) as SessionEntry;

function lines(file: string): string[] {
  return fs.readFileSync(file, "utf8").trim().split("\n");
}

describe("close() and the last fsync", () => {
  it("skips its fsync when the last completed fsync covered every append", () => {
    const file = tempFile();
    const storage = JsonlStorage.create(file, createSessionHeader());
    storage.append(entry("a", null));
    storage.append(entry("b", "a"));
    storage.sync({ wait: true });
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.close();
    expect(fsync).not.toHaveBeenCalled();
    expect(lines(file)).toHaveLength(3);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it("fsyncs when an entry was appended after the last fsync", () => {
    const file = tempFile();
    const storage = JsonlStorage.create(file, createSessionHeader());
    storage.append(entry("a", null));
    storage.sync({ wait: true });
    storage.append(entry("b", "a"));
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.close();
    expect(fsync).toHaveBeenCalledTimes(1);
    expect(
      lines(file)
        .slice(1)
        .map((line) => JSON.parse(line).id),
    ).toEqual(["a", "b"]);
  });

  it("fsyncs a reopened file that was appended to but never synced", () => {
    const file = tempFile();
    JsonlStorage.create(file, createSessionHeader()).close();
    const storage = JsonlStorage.open(file);
    storage.load();
    storage.append(entry("a", null));
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.close();
    expect(fsync).toHaveBeenCalledTimes(1);
  });

  it("counts a background fdatasync only once it completed, and only for the bytes it covered", () => {
    const file = tempFile();
    const storage = JsonlStorage.create(file, createSessionHeader());
    const callbacks: Array<(error: NodeJS.ErrnoException | null) => void> = [];
    vi.spyOn(fs, "fdatasync").mockImplementation(((
      _fd: number,
      done: (e: NodeJS.ErrnoException | null) => void,
    ) => {
      callbacks.push(done);
    }) as typeof fs.fdatasync);
    storage.append(entry("a", null));
    storage.sync({ wait: false });
    // Still under way: close must flush itself.
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.append(entry("b", "a"));
    callbacks.shift()?.(null); // completes, but it started before "b"
    storage.close();
    expect(fsync).toHaveBeenCalledTimes(1);
  });

  it("skips its fsync after a background fdatasync that covered everything", () => {
    const file = tempFile();
    const storage = JsonlStorage.create(file, createSessionHeader());
    const callbacks: Array<(error: NodeJS.ErrnoException | null) => void> = [];
    vi.spyOn(fs, "fdatasync").mockImplementation(((
      _fd: number,
      done: (e: NodeJS.ErrnoException | null) => void,
    ) => {
      callbacks.push(done);
    }) as typeof fs.fdatasync);
    storage.append(entry("a", null));
    storage.sync({ wait: false });
    callbacks.shift()?.(null);
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.close();
    expect(fsync).not.toHaveBeenCalled();
  });

  it("fsyncs at close after a background fdatasync failed", () => {
    const file = tempFile();
    const storage = JsonlStorage.create(file, createSessionHeader());
    vi.spyOn(fs, "fdatasync").mockImplementation(((
      _fd: number,
      done: (e: NodeJS.ErrnoException | null) => void,
    ) => {
      done(Object.assign(new Error("EIO"), { code: "EIO" }));
    }) as typeof fs.fdatasync);
    storage.append(entry("a", null));
    storage.sync({ wait: false });
    const fsync = vi.spyOn(fs, "fsyncSync");
    storage.close();
    expect(fsync).toHaveBeenCalledTimes(1);
  });
});
