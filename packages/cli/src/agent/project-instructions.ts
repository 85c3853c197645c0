/**
 * Project instructions: `AGENTS.md` files (a folder's `CLAUDE.md` when it has no
 * `AGENTS.md`) in the system prompt, with provenance in the session.
 *
 * When each loads (the project root is the config file's folder):
 * - at the start: the root's, then each folder's from the root down to the
 *   working directory;
 * - nested: when a tool call that runs touches a path (the canonical paths its
 *   `inspect` declares, e.g. `read`'s `path`) below a folder that has one, that
 *   file joins at the next turn boundary (the system prompt is resolved per turn),
 *   appended after the ones already loaded, so the prompt's prefix stays stable.
 *
 * Invariants: only files inside the project root are read (a link resolving
 * outside is skipped with a warning, never read); each file is read once per
 * turn, and the text the model receives and the sha256 recorded in the session
 * (a `custom` entry `rein.instructions`, written whenever a file joins or its
 * content changes) come from the same read; a file over 32 KiB is cut with a note.
 * With `enabled: false` (config `instructions: { enabled: false }`) no file is
 * looked for, read or recorded: the prompt is the config's, then the appendix.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { AgentHarness, SessionEntry, SystemPromptSource } from "@rein/harness";

export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md"] as const;
export const INSTRUCTIONS_ENTRY = "rein.instructions";
const MAX_BYTES = 32 * 1024;

export interface InstructionFile {
  /** Relative to the project root, `/` separated. */
  path: string;
  sha256: string;
  bytes: number;
  /** `start`, or the tool and path that brought it in. */
  loadedBy: string;
  truncated?: boolean;
}

export interface ProjectInstructions {
  /** The harness's system prompt: the config's `systemPrompt`, then the instructions, then `appendix`. */
  readonly systemPrompt: SystemPromptSource;
  /** The config's own system prompt (a reload replaces it). */
  base: string;
  /** Extra sections after the instructions (the `--output-schema` contract). */
  appendix: string[];
  /** Files loaded so far, in load order. */
  files(): InstructionFile[];
  /**
   * Starts recording provenance and watching tool calls for nested folders;
   * `branch` is the session's active branch: the files it already records (a
   * resumed session) load again from the start and are not recorded twice.
   */
  watch(harness: AgentHarness, branch: readonly SessionEntry[]): () => void;
}

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
};

const toPosix = (rel: string) => (rel === "" ? "." : rel.split(sep).join("/"));

export function projectInstructions(options: {
  root: string;
  cwd: string;
  base: string;
  warn(message: string): void;
  /** `false`: load no instruction file at all. Default true. */
  enabled?: boolean;
}): ProjectInstructions {
  const enabled = options.enabled !== false;
  let root: string;
  try {
    root = realpathSync.native(options.root);
  } catch {
    root = options.root;
  }
  /** Folder (absolute) -> why it was loaded; insertion order is load order. */
  const folders = new Map<string, string>();
  const warned = new Set<string>();
  /** What the session last recorded per file, to write an entry only on a change. */
  const recorded = new Map<string, string>();
  let current: InstructionFile[] = [];
  let write: ((files: InstructionFile[]) => void) | undefined;

  const addChain = (target: string, why: string) => {
    if (!inside(root, target)) return;
    const chain: string[] = [];
    for (let dir = target; inside(root, dir); dir = dirname(dir)) {
      chain.unshift(dir);
      if (dir === root) break;
    }
    for (const dir of chain) if (!folders.has(dir)) folders.set(dir, why);
  };
  let cwd = options.cwd;
  try {
    cwd = realpathSync.native(cwd);
  } catch {
    // a missing working directory fails elsewhere
  }
  folders.set(root, "start");
  addChain(cwd, "start");

  const fileIn = (dir: string): string | undefined => {
    for (const name of INSTRUCTION_FILES) {
      const file = join(dir, name);
      if (existsSync(file)) return file;
    }
    return undefined;
  };

  const read = () => {
    const sections: string[] = [];
    const files: InstructionFile[] = [];
    for (const [dir, why] of folders) {
      const file = fileIn(dir);
      if (!file) continue;
      let real: string;
      try {
        real = realpathSync.native(file);
      } catch {
        continue;
      }
      const path = toPosix(relative(root, file));
      if (!inside(root, real)) {
        if (!warned.has(file)) options.warn(`${path} links outside the project (${real}): not loaded`);
        warned.add(file);
        continue;
      }
      let bytes: Buffer;
      try {
        bytes = readFileSync(real);
      } catch {
        continue;
      }
      const truncated = bytes.length > MAX_BYTES;
      let text = bytes.subarray(0, MAX_BYTES).toString("utf8").trim();
      if (truncated) text += `\n\n[${path} cut at ${MAX_BYTES} of ${bytes.length} bytes]`;
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const scope = dir === root ? "the whole project" : `${toPosix(relative(root, dir))}/ and below`;
      sections.push(`## ${path} (applies to ${scope})\n\n${text}`);
      files.push({ path, sha256, bytes: bytes.length, loadedBy: why, ...(truncated ? { truncated } : {}) });
    }
    current = files;
    const changed = files.filter((file) => recorded.get(file.path) !== file.sha256);
    if (changed.length > 0 && write) {
      for (const file of changed) recorded.set(file.path, file.sha256);
      write(changed);
    }
    return sections;
  };

  const instructions: ProjectInstructions = {
    base: options.base,
    appendix: [],
    systemPrompt: () => {
      const sections = enabled ? read() : [];
      const parts = [instructions.base.trim()];
      if (sections.length > 0)
        parts.push(
          `# Project instructions\n\nFollow these instructions from the project.\n\n${sections.join("\n\n")}`,
        );
      parts.push(...instructions.appendix);
      return parts.filter((part) => part !== "").join("\n\n");
    },
    files: () => current,
    watch(harness, branch) {
      if (!enabled) return () => undefined;
      for (const entry of branch) {
        if (entry.type !== "custom" || entry.customType !== INSTRUCTIONS_ENTRY) continue;
        const files = (entry.data as { files?: InstructionFile[] } | undefined)?.files ?? [];
        for (const file of files) {
          if (typeof file?.path !== "string" || typeof file.sha256 !== "string") continue;
          recorded.set(file.path, file.sha256);
          const dir = dirname(join(root, file.path));
          if (inside(root, dir) && !folders.has(dir)) folders.set(dir, file.loadedBy ?? "start");
        }
      }
      write = (files) =>
        harness.appendEntry({ type: "custom", customType: INSTRUCTIONS_ENTRY, data: { files } });
      return harness.subscribe(
        async (event) => {
          if (event.type !== "tool_execution_start") return;
          const tool = harness.snapshot?.tools.find((t) => t.name === event.toolName);
          if (!tool?.inspect) return;
          try {
            const facts = (await tool.inspect(event.args as never, {
              cwd: harness.snapshot?.cwd ?? options.cwd,
              sessionId: harness.sessionId,
            })) as { paths?: readonly { absolute: string; kind: string }[] };
            for (const fact of facts.paths ?? []) {
              const dir = fact.kind === "walk" ? fact.absolute : dirname(fact.absolute);
              addChain(dir, `${event.toolName} ${toPosix(relative(root, fact.absolute))}`);
            }
          } catch {
            // arguments the tool rejects touch nothing
          }
        },
        { owner: "rein-instructions" },
      );
    },
  };
  return instructions;
}
