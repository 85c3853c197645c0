/**
 * The path mentions of an MCP tool without declared paths, at both ends of a call:
 * `inspect` turns them into `facts.mentionedPaths` for the gates, and `execute`
 * refuses a call of a tool that may write when a mention is Rein's own state.
 *
 * Invariants: inspection that cannot finish (too many strings) throws, which the
 * harness turns into a deny naming the reason; without a harness (no inspect ran)
 * the mentions are found in `execute` by the same function; the arguments the
 * server gets are the model's, unchanged (only declared paths are rewritten).
 */
import type { ProtectedFiles, ResolvedPathFacts, ToolCallFacts } from "@rein/sdk";
import { pathRefused } from "./errors.js";
import { mentionedPaths, TooManyStrings } from "./path-mentions.js";
import { refuseReinState } from "./paths.js";

function find(
  server: string,
  tool: string,
  args: Record<string, unknown>,
  cwd: string,
  root: string | undefined,
): ResolvedPathFacts[] {
  try {
    return mentionedPaths(args, { cwd, root });
  } catch (error) {
    if (error instanceof TooManyStrings) throw pathRefused(server, tool, `${error.message}: not inspected`);
    throw error;
  }
}

/** The facts of one call: `{ mentionedPaths }` when its arguments name paths, else none. */
export function mentionsFacts(
  server: string,
  tool: string,
  args: unknown,
  cwd: string,
  root: string | undefined,
): ToolCallFacts {
  const found = find(server, tool, (args ?? {}) as Record<string, unknown>, cwd, root);
  return found.length > 0 ? { mentionedPaths: found } : {};
}

export interface MentionGuard {
  root: string | undefined;
  /** Whether the tool may write (risk other than `read`): Rein's own files are then refused. */
  writes: boolean;
  protectedFiles: ProtectedFiles | undefined;
}

/** The arguments to send (unchanged); throws `path_refused` for a write that names Rein's state. */
export function guardMentions(
  server: string,
  tool: string,
  args: Record<string, unknown>,
  context: { facts: Readonly<ToolCallFacts>; cwd: string },
  guard: MentionGuard,
): Record<string, unknown> {
  if (!guard.writes) return args;
  const facts = context.facts.mentionedPaths ?? find(server, tool, args, context.cwd, guard.root);
  for (const fact of facts) refuseReinState(server, tool, fact, guard.protectedFiles);
  return args;
}
