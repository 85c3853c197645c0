/**
 * @rein/plugin-permissions: answers the gate's `ask` verdicts.
 *
 * - In a terminal (input and output are TTYs): a prompt showing the tool, the
 *   reason it was asked and the exact arguments, answered with allow once / allow
 *   for this session / deny.
 * - Without a terminal: deny, with a reason that says how to allow the call.
 * - Session grants are appended to the session as `custom` entries
 *   (`rein.permission-grant`) and restored on setup, so a resumed session keeps them.
 *   A grant covers exactly what the prompt showed (see grants.ts) and carries an
 *   HMAC made with the user's grant key; a forged or altered entry is ignored with
 *   a warning.
 * - A default verdict by tool risk (read: allow; write, exec, network: ask) replaces
 *   the harness's "allow" for calls no gate has an opinion on.
 *
 * Invariants: a grant only ever answers an `ask` (it can never override a deny);
 * prompts are asked one at a time; an aborted run or closed input is a deny.
 * The terminal is injectable (`createPermissionsPlugin({ io })`) for tests and UIs.
 */
import path from "node:path";
import {
  argsHash,
  canonicalJson,
  definePlugin,
  type PermissionAnswer,
  type PermissionRequest,
  type Rein,
  type SessionEntry,
  type Static,
  type ToolGateCall,
  type ToolRisk,
  Type,
  textMasks,
} from "@rein/sdk";
import {
  configDir,
  covers,
  describeScope,
  isGrant,
  loadGrantKey,
  type PermissionGrant,
  scopeOf,
  sign,
  verify,
} from "./grants.js";
import { LineReader, type LineSource } from "./line-reader.js";

export {
  configDir,
  covers,
  describeScope,
  type GrantedCommand,
  isGrant,
  loadGrantKey,
  type PermissionGrant,
  scopeOf,
  sign,
  verify,
} from "./grants.js";

export { LineReader, type LineSource } from "./line-reader.js";

/** The session entry's `customType` for a session grant. */
export const GRANT_ENTRY_TYPE = "rein.permission-grant";

const Verdict = (fallback: "allow" | "ask" | "deny") =>
  Type.Union([Type.Literal("allow"), Type.Literal("ask"), Type.Literal("deny")], { default: fallback });

export const PermissionsOptions = Type.Object(
  {
    /** The verdict for calls no gate has an opinion on, by the tool's risk (`unknown`: tools that declare none). */
    defaults: Type.Object(
      {
        read: Verdict("allow"),
        write: Verdict("ask"),
        exec: Verdict("ask"),
        network: Verdict("ask"),
        unknown: Verdict("ask"),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Whether to install `defaults` as the harness's default verdict. */
    setDefaultVerdict: Type.Boolean({ default: true }),
    /** `auto`: prompt when input and output are terminals; `never`: always answer without a prompt (deny). */
    prompt: Type.Union([Type.Literal("auto"), Type.Literal("never")], { default: "auto" }),
    /**
     * What "allow for this session" covers, always for the same tool and decider:
     * `call` - exactly what the prompt shows (the same simple commands of a shell
     * call, the same canonical paths of a file tool, else the same arguments);
     * `exact` - the same arguments only.
     */
    grantScope: Type.Union([Type.Literal("call"), Type.Literal("exact")], { default: "call" }),
  },
  { additionalProperties: false },
);
export type PermissionsOptions = Static<typeof PermissionsOptions>;

/** The terminal the prompt uses. `isTTY` overrides the streams' own flags. */
export interface PromptIO {
  input: LineSource & { isTTY?: boolean };
  output: { write(text: string): unknown; isTTY?: boolean };
  isTTY?: boolean;
}

export interface PermissionsPluginOptions {
  /** The prompt's streams; default `process.stdin` and `process.stderr` (read when a prompt is needed). */
  io?: PromptIO | (() => PromptIO);
  /** Plugin name; default `permissions`. */
  name?: string;
  /**
   * The grant key file (created 0600 on first use). Default `<config dir>/grant-key`,
   * where the config dir is `$REIN_CONFIG_DIR`, `$XDG_CONFIG_HOME/rein` or `~/.config/rein`:
   * outside the project, so no file tool reaches it.
   */
  keyFile?: string;
}

/** The default grant key file. */
export const defaultKeyFile = (env: NodeJS.ProcessEnv = process.env) =>
  path.join(configDir(env), "grant-key");

type Answer = "once" | "session" | "deny";

export { argsHash, canonicalJson };

/** How the call reads in policy-rule grammar: `bash(git push)`, `write(src/a.ts)`, or the bare tool name. */
export function ruleFor(
  call: Pick<ToolGateCall, "name" | "args"> & { facts?: ToolGateCall["facts"] },
): string {
  // A path rule is spelled on the canonical path the gates saw (src/link -> ../.env reads .env).
  const [only, ...more] = call.facts?.paths ?? [];
  if (only && more.length === 0 && only.inside && !only.relative.startsWith("..")) {
    return `${call.name}(${only.relative})`;
  }
  for (const key of ["command", "path"]) {
    const value = call.args[key];
    if (typeof value === "string" && !value.includes("\n")) return `${call.name}(${value})`;
  }
  return call.name;
}

/** The reason of a deny given without a terminal: why, and how to allow such a call. */
export function nonInteractiveReason(
  request: PermissionRequest,
  why = "there is no terminal to ask",
): string {
  const { call, verdict } = request;
  const how = [
    `run it in a terminal and answer "y" or "s"`,
    `or allow it in the config, e.g. ["@rein/plugin-policy", { rules: [{ rule: ${JSON.stringify(ruleFor(call))}, decision: "allow", reason: "..." }] }]`,
  ];
  if (verdict.by === "harness:default") {
    how.push(
      `or set ["@rein/plugin-permissions", { defaults: { ${call.risk ?? "unknown"}: "allow" } }] (the default verdict asked)`,
    );
  }
  return `${verdict.reason} (asked by ${verdict.by}); ${why}, so it is denied. To allow it: ${how.join(", ")}`;
}

/** A grant entry read back from the session, and whether Rein wrote it. */
export interface StoredGrant {
  entryId: string;
  grant: PermissionGrant | undefined;
  problem?: string;
}

/** The grant entries recorded in a session (every branch: a grant is for the whole session), checked. */
export function grantsFrom(entries: readonly SessionEntry[], key: Buffer, sessionId: string): StoredGrant[] {
  const found: StoredGrant[] = [];
  for (const entry of entries) {
    if (entry.type !== "custom" || entry.customType !== GRANT_ENTRY_TYPE) continue;
    const data = entry.data;
    if (!isGrant(data)) found.push({ entryId: entry.id, grant: undefined, problem: "it is malformed" });
    else if (!verify(key, data, sessionId)) {
      found.push({
        entryId: entry.id,
        grant: undefined,
        problem: "its signature is missing or wrong (not written by Rein)",
      });
    } else found.push({ entryId: entry.id, grant: data });
  }
  return found;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => prefix + line)
    .join("\n");
}

/** The prompt text for one request: the session option names exactly what it would grant. */
export function promptText(request: PermissionRequest, scope: "call" | "exact"): string {
  const { call, verdict } = request;
  const sessionWhat = describeScope(call.name, scopeOf(call, scope === "exact"));
  return [
    "",
    `Permission needed: ${call.name}${call.risk ? ` (risk: ${call.risk})` : ""}`,
    `  reason: ${verdict.reason}`,
    `  asked by: ${verdict.by}`,
    "  arguments:",
    indent(JSON.stringify(call.args, null, 2), "    "),
    `  [y] allow once   [s] allow for this session (${sessionWhat})   [n] deny`,
    "",
  ].join("\n");
}

function parseAnswer(line: string): Answer | undefined {
  const answer = line.trim().toLowerCase();
  if (["y", "yes", "o", "once", "allow"].includes(answer)) return "once";
  if (["s", "session", "a", "always"].includes(answer)) return "session";
  if (["n", "no", "d", "deny", ""].includes(answer)) return "deny";
  return undefined;
}

const defaultIO = (): PromptIO => ({ input: process.stdin, output: process.stderr });

/** Builds the plugin; `io` replaces the terminal (tests drive it with a PassThrough pair flagged as TTY). */
export function createPermissionsPlugin(plugin: PermissionsPluginOptions = {}) {
  const resolveIO =
    typeof plugin.io === "function" ? plugin.io : () => (plugin.io as PromptIO) ?? defaultIO();
  const readers = new WeakMap<object, LineReader>();
  const readerFor = (io: PromptIO) => {
    let reader = readers.get(io.input);
    if (!reader) {
      reader = new LineReader(io.input);
      readers.set(io.input, reader);
    }
    return reader;
  };

  return definePlugin({
    name: plugin.name ?? "permissions",
    version: "0.1.0",
    description: "Terminal permission prompts, session grants, and a default verdict by tool risk.",
    options: PermissionsOptions,
    setup(rein: Rein, options: PermissionsOptions) {
      const keyFile = plugin.keyFile ?? defaultKeyFile();
      let key: Buffer | undefined;
      // Read (or made) only when a grant is restored or given: no key file for sessions that never grant.
      const grantKey = () => {
        key ??= loadGrantKey(keyFile);
        return key;
      };
      const mask = (text: string) => textMasks(rein).mask(text);
      const grants: PermissionGrant[] = [];
      const stored = rein.session
        .entries()
        .some((e) => e.type === "custom" && e.customType === GRANT_ENTRY_TYPE)
        ? grantsFrom(rein.session.entries(), grantKey(), rein.session.id)
        : [];
      for (const item of stored) {
        if (item.grant) grants.push(item.grant);
        else
          rein.logger.warn(`ignored the permission grant in session entry ${item.entryId}: ${item.problem}`);
      }
      if (grants.length > 0) rein.logger.debug(`restored ${grants.length} session grant(s)`);
      const coveredBy = (request: PermissionRequest) =>
        grants.find((g) => covers(g, request.call, request.verdict.by));

      if (options.setDefaultVerdict) {
        const defaults = options.defaults;
        rein.setDefaultToolVerdict((call) => {
          const risk: ToolRisk | "unknown" = call.risk ?? "unknown";
          const decision = defaults[risk];
          return {
            decision,
            reason:
              call.risk === undefined
                ? `${call.name} declares no risk; the default for such tools is ${decision}`
                : `${call.name} has risk "${call.risk}"; the default for ${call.risk} tools is ${decision}`,
          };
        });
      }

      // One prompt at a time: parallel tool calls queue up behind the question on screen.
      let queue: Promise<unknown> = Promise.resolve();
      const serially = <T>(task: () => Promise<T>): Promise<T> => {
        const next = queue.then(task, task);
        queue = next.catch(() => undefined);
        return next;
      };

      const ask = async (request: PermissionRequest, signal: AbortSignal): Promise<Answer | "closed"> => {
        const io = resolveIO();
        const reader = readerFor(io);
        io.output.write(mask(promptText(request, options.grantScope)));
        for (let attempt = 0; attempt < 3; attempt++) {
          io.output.write("> ");
          const line = await reader.readLine(signal);
          if (line === undefined) return "closed";
          const answer = parseAnswer(line);
          if (answer) return answer;
          io.output.write(`  please answer y (once), s (session) or n (deny); got ${JSON.stringify(line)}\n`);
        }
        return "deny";
      };

      rein.hooks.permissionAsk.tapPromise(
        rein.plugin.name,
        async (request, context): Promise<PermissionAnswer | undefined> => {
          const grant = coveredBy(request);
          if (grant) {
            return { decision: "allow", reason: `allowed for this session (granted ${grant.grantedAt})` };
          }
          if (options.prompt === "never") {
            return {
              decision: "deny",
              reason: mask(nonInteractiveReason(request, 'prompting is off (prompt: "never")')),
            };
          }
          const io = resolveIO();
          const interactive = io.isTTY ?? (io.input.isTTY === true && io.output.isTTY === true);
          if (!interactive) {
            // Nobody to ask here: with durable approvals the harness parks the call for a person.
            if (context.config.onUnanswered === "park") return undefined;
            return { decision: "deny", reason: mask(nonInteractiveReason(request)) };
          }

          const answer = await serially(() =>
            // A grant given while this request waited in line may already cover it.
            coveredBy(request) !== undefined
              ? Promise.resolve("session" as const)
              : ask(request, context.signal),
          );
          if (answer === "closed") {
            return {
              decision: "deny",
              reason: mask(
                `${request.verdict.reason} (asked by ${request.verdict.by}); no answer (${context.signal.aborted ? "run aborted" : "input closed"}), so it is denied`,
              ),
            };
          }
          if (answer === "deny")
            return { decision: "deny", reason: mask(`denied at the prompt: ${request.verdict.reason}`) };
          if (answer === "once") return { decision: "allow", reason: "allowed once at the prompt" };
          if (coveredBy(request) === undefined) {
            const grant = sign(
              grantKey(),
              {
                tool: request.call.name,
                askedBy: request.verdict.by,
                ...scopeOf(request.call, options.grantScope === "exact"),
                grantedAt: new Date().toISOString(),
              },
              context.session.id,
            );
            grants.push(grant);
            context.session.append({ type: "custom", customType: GRANT_ENTRY_TYPE, data: grant });
          }
          return { decision: "allow", reason: "allowed for this session at the prompt" };
        },
      );
    },
  });
}

export default createPermissionsPlugin();
