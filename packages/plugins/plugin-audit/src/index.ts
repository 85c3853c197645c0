/**
 * @rein/plugin-audit: one JSON line per tool decision in an append-only audit
 * file - verdict, who decided (`by`), why, the tool, a sha256 of the canonical
 * arguments, time, session, run and turn.
 *
 * Invariants:
 * - it only listens (`tool_decision` events), so it can never change or delay a
 *   decision beyond one synchronous append;
 * - a failed write (full disk, unwritable path) never fails the run: the record is
 *   kept in memory (up to `maxPending`) and written before the next one, and the
 *   listener throws so the harness reports a `plugin_error` naming this plugin;
 * - records are written in decision order; arguments are hashed, not stored,
 *   unless `includeArgs` is set (arguments can hold secrets), and every line is
 *   masked by the harness's text masks (plugin-redact) before it is written;
 * - paths are recorded as the gates saw them: the canonical `facts.paths` of the
 *   call (the SDK's one resolver), never a second resolution of the arguments.
 *   A gate tap with no opinion reads them (it never decides).
 * The default file, `.rein/audit.jsonl`, is a protected path of @rein/tools-fs.
 */
import fs from "node:fs";
import path from "node:path";
import { argsHash, canonicalJson, definePlugin, Stage, type Static, Type, textMasks } from "@rein/sdk";

export const AuditOptions = Type.Object(
  {
    /** The JSONL file, relative to the working directory; its directory is created if missing. */
    file: Type.String({ minLength: 1, default: ".rein/audit.jsonl" }),
    /** Also store the arguments themselves (they can hold secrets; the hash is always stored). */
    includeArgs: Type.Boolean({ default: false }),
    /** Records kept in memory while writes fail; beyond that the oldest are dropped (and counted). */
    maxPending: Type.Integer({ minimum: 1, default: 10_000 }),
  },
  { additionalProperties: false },
);
export type AuditOptions = Static<typeof AuditOptions>;

/** One line of the audit file. */
export interface AuditRecord {
  /** ISO 8601, when the decision was made. */
  time: string;
  session: string;
  run: string | null;
  turn: string | null;
  toolCallId: string;
  tool: string;
  decision: "allow" | "deny";
  /** `<plugin>[:<rule>]`, `harness` or `harness:default`. */
  by: string;
  reason: string;
  /** For an `ask` that was answered: who asked. */
  askedBy?: string;
  /** `sha256:<hex>` of the canonical JSON (sorted keys) of the arguments. */
  argsHash: string;
  args?: unknown;
  /** The call's canonical paths relative to the project root (absolute when outside), as the gates saw them. */
  paths?: string[];
}

/** Calls whose facts wait for their decision; bounded, since a probe (`checkToolCall`) gets no decision event. */
const MAX_WAITING = 256;

/** Re-exported: the canonical form and hash used for `argsHash`. */
export { argsHash, canonicalJson };

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export default definePlugin({
  name: "audit",
  version: "0.1.0",
  description: "Append-only JSONL audit log of every tool decision.",
  options: AuditOptions,
  setup(rein, options) {
    const file = path.resolve(rein.config.cwd, options.file);
    const pending: string[] = [];
    let dropped = 0;
    let failing = false;
    let runId: string | null = null;
    let turnId: string | null = null;

    /** Writes everything pending; returns the error if the write failed (nothing is lost then). */
    const flush = (): unknown => {
      if (pending.length === 0) return undefined;
      const text = pending.join("");
      try {
        try {
          fs.appendFileSync(file, text);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.appendFileSync(file, text);
        }
      } catch (error) {
        return error;
      }
      pending.length = 0;
      if (failing) {
        failing = false;
        rein.logger.info(`audit file ${file} is writable again; delayed records were written`);
      }
      return undefined;
    };

    rein.on("agent_start", (event) => {
      runId = event.runId;
      turnId = null;
    });
    rein.on("turn_start", (event) => {
      turnId = event.turnId;
    });
    rein.on("agent_end", () => {
      runId = null;
      turnId = null;
    });

    const masks = textMasks(rein);
    const pathsOf = new Map<string, string[]>();
    rein.hooks.toolGate.tap({ name: "audit", stage: Stage.first }, (call) => {
      const paths = call.facts.paths;
      if (paths && paths.length > 0) {
        pathsOf.set(
          call.id,
          paths.map((p) => (p.relative.startsWith("..") ? p.absolute : p.relative)),
        );
        if (pathsOf.size > MAX_WAITING) pathsOf.delete(pathsOf.keys().next().value as string);
      }
      return undefined;
    });

    rein.on("tool_decision", (event) => {
      const paths = pathsOf.get(event.toolCallId);
      pathsOf.delete(event.toolCallId);
      const record: AuditRecord = {
        time: new Date().toISOString(),
        session: rein.session.id,
        run: runId,
        turn: turnId,
        toolCallId: event.toolCallId,
        tool: event.toolName,
        decision: event.decision,
        by: event.by,
        reason: event.reason,
        ...(event.askedBy !== undefined ? { askedBy: event.askedBy } : {}),
        argsHash: argsHash(event.args),
        ...(options.includeArgs ? { args: event.args } : {}),
        ...(paths ? { paths } : {}),
      };
      pending.push(`${masks.mask(JSON.stringify(record))}\n`);
      if (pending.length > options.maxPending) {
        dropped += pending.length - options.maxPending;
        pending.splice(0, pending.length - options.maxPending);
      }
      const error = flush();
      if (error === undefined) return;
      const code = (error as NodeJS.ErrnoException).code;
      if (!failing) {
        failing = true;
        rein.logger.error(`cannot write audit file ${file}: ${describe(error)}; records are kept in memory`);
      }
      // Thrown from a listener: the harness reports a plugin_error and the run goes on.
      throw Object.assign(
        new Error(
          `audit record not written to ${file}: ${describe(error)} (${pending.length} record(s) waiting${dropped > 0 ? `, ${dropped} dropped` : ""})`,
        ),
        code === undefined ? {} : { code },
      );
    });

    return () => {
      const error = flush();
      if (error !== undefined || dropped > 0) {
        rein.logger.error(
          `audit: ${pending.length} record(s) could not be written to ${file}${dropped > 0 ? ` and ${dropped} were dropped` : ""}${error !== undefined ? `: ${describe(error)}` : ""}`,
        );
      }
    };
  },
});
