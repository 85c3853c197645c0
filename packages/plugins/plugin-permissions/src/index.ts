/**
 * @rein/plugin-permissions: answers the gate's `ask` verdicts.
 *
 * - In a terminal (input and output are TTYs): a prompt showing the tool, the
 *   reason it was asked and the exact arguments, answered with allow once / allow
 *   for this session / deny.
 * - Without a terminal: deny, with a reason that says how to allow the call.
 * - Session grants are appended to the session as `custom` entries
 *   (`rein.permission-grant`) and restored on setup, so a resumed session keeps them;
 *   grant entries appended later by another writer count from then on (`rein replay`
 *   gives a recorded session's grants back at the answer that made them).
 *   A grant covers exactly what the prompt showed (see grants.ts) and carries an
 *   HMAC made with the user's grant key; a forged or altered entry is ignored with
 *   a warning.
 * - A default verdict by tool risk (read: allow; write, exec, network: ask) replaces
 *   the harness's "allow" for calls no gate has an opinion on; a permission `mode`
 *   (modes.ts) adjusts it, never loosening a deny.
 * - Project grants ("always allow in this project", project-grants.ts) are written
 *   to `grantsFile` (the CLI's local config layer) and come back as `projectGrants`.
 *
 * Invariants: a grant only ever answers an `ask` (it can never override a deny);
 * in `plan` mode the plugin's own gate denies every call but a `read`, so allow
 * rules of any layer cannot make a plan run write or execute;
 * prompts are asked one at a time; an aborted run or closed input is a deny.
 * The terminal is injectable (`createPermissionsPlugin({ io })`) for tests and UIs.
 */
import path from "node:path";
import {
  argsHash,
  canonicalJson,
  definePlugin,
  type HookContext,
  type PermissionAnswer,
  type PermissionRequest,
  type Rein,
  type Static,
  type ToolRisk,
  Type,
  textMasks,
} from "@rein/sdk";
import {
  configDir,
  covers,
  describeScope,
  loadGrantKey,
  notUnderstood,
  type PermissionGrant,
  prefixScopeOf,
  scopeOf,
  sign,
} from "./grants.js";
import { hostIO, type PromptIO } from "./host-io.js";
import { DEFAULT_INSTRUCTION_FILES, instructionMatcher, instructionWrite } from "./instruction-files.js";
import { LineReader } from "./line-reader.js";
import { modeVerdict, type PermissionMode, planRefusal } from "./modes.js";
import { projectBinding, projectGrantsFrom, saveProjectGrant } from "./project-grants.js";
import { type Answer, nonInteractiveReason, parseAnswer, promptText } from "./prompt-text.js";
import { SessionGrants } from "./session-grants.js";

export {
  commandPrefix,
  configDir,
  covers,
  describeScope,
  type GrantedCommand,
  isGrant,
  loadGrantKey,
  type PermissionGrant,
  prefixScopeOf,
  scopeOf,
  sign,
  verify,
} from "./grants.js";
export { type PromptIO, setHostPromptIO } from "./host-io.js";
export {
  DEFAULT_INSTRUCTION_FILES,
  type InstructionMatcher,
  type InstructionWrite,
  instructionMatcher,
  instructionWrite,
} from "./instruction-files.js";
export { LineReader, type LineSource } from "./line-reader.js";
export {
  editsInside,
  modeVerdict,
  PERMISSION_MODES,
  type PermissionMode,
  planRefusal,
  provesSandbox,
} from "./modes.js";
export {
  PACKAGE_NAME,
  projectBinding,
  projectGrantsFrom,
  type StoredProjectGrant,
  saveProjectGrant,
} from "./project-grants.js";
export { nonInteractiveReason, promptText, ruleFor } from "./prompt-text.js";
export { GRANT_ENTRY_TYPE, grantsFrom, type StoredGrant } from "./session-grants.js";

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
    /** How much runs without asking: `default`, `acceptEdits`, `plan` (read-only), `sandboxed` (see modes.ts). */
    mode: Type.Union(
      [Type.Literal("default"), Type.Literal("acceptEdits"), Type.Literal("plan"), Type.Literal("sandboxed")],
      { default: "default" satisfies PermissionMode },
    ),
    /**
     * Where "always allow in this project" grants are written: a JSON config layer
     * (the CLI sets its local layer, `.rein/local.json`). Unset: the prompt offers no "always".
     */
    grantsFile: Type.Optional(Type.String({ minLength: 1 })),
    /** Project grants written by this plugin to `grantsFile` (signed; others are ignored with a warning). */
    projectGrants: Type.Array(Type.Unknown(), { default: [] }),
    /**
     * A write to an instruction file (`instructionFiles`): `ask` (default) whatever an
     * allow rule or a mode says, `deny`, or `allow` (no opinion: the other gates decide).
     */
    instructionWrites: Verdict("ask"),
    /** What later sessions read as instructions: file names (any depth) and folders (`dir/`); see instruction-files.ts. */
    instructionFiles: Type.Array(Type.String({ minLength: 1 }), { default: [...DEFAULT_INSTRUCTION_FILES] }),
  },
  { additionalProperties: false },
);
export type PermissionsOptions = Static<typeof PermissionsOptions>;

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

export { argsHash, canonicalJson };

const defaultIO = (): PromptIO => ({ input: process.stdin, output: process.stderr });

/** Builds the plugin; `io` replaces the terminal (tests drive it with a PassThrough pair flagged as TTY). */
export function createPermissionsPlugin(plugin: PermissionsPluginOptions = {}) {
  const resolveIO =
    typeof plugin.io === "function" ? plugin.io : () => (plugin.io as PromptIO) ?? hostIO() ?? defaultIO();
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
      const grants = new SessionGrants({ grantKey, warn: (m) => rein.logger.warn(m) }, rein.session);
      const restored = grants.restore(rein.session);
      if (restored > 0) rein.logger.debug(`restored ${restored} session grant(s)`);
      const coveredBy = (request: PermissionRequest, context: HookContext) =>
        grants.coveredBy(request, context);
      const grantsFile =
        options.grantsFile === undefined ? undefined : path.resolve(rein.config.cwd, options.grantsFile);
      const shownFile = grantsFile && path.relative(rein.config.cwd, grantsFile);
      const projectGrants: PermissionGrant[] = [];
      if (options.projectGrants.length > 0) {
        for (const item of projectGrantsFrom(options.projectGrants, grantKey(), grantsFile)) {
          if (item.grant) projectGrants.push(item.grant);
          else rein.logger.warn(`ignored project grant projectGrants[${item.index}]: ${item.problem}`);
        }
      }
      const projectCover = (request: PermissionRequest) =>
        projectGrants.find((g) => covers(g, request.call, request.verdict.by));

      if (options.setDefaultVerdict) {
        const defaults = options.defaults;
        rein.setDefaultToolVerdict((call) => {
          const risk: ToolRisk | "unknown" = call.risk ?? "unknown";
          const decision = defaults[risk];
          return modeVerdict(options.mode, call, {
            decision,
            reason:
              call.risk === undefined
                ? `${call.name} declares no risk; the default for such tools is ${decision}`
                : `${call.name} has risk "${call.risk}"; the default for ${call.risk} tools is ${decision}`,
          });
        });
      }

      // A write to what a later session reads as instructions is a person's call (instruction-files.ts).
      if (options.instructionWrites !== "allow") {
        const match = instructionMatcher(options.instructionFiles);
        const decision = options.instructionWrites;
        rein.hooks.toolGate.tapPromise(rein.plugin.name, async (call) => {
          if (call.risk === "read") return undefined;
          const found = instructionWrite(call, rein.config.cwd, match);
          if (found === undefined) return undefined;
          return {
            decision,
            reason: `${call.name} may write ${found.target} (${found.entry}), which agents read as instructions in later sessions`,
          };
        });
      }

      // Plan mode is read-only whatever else allows: a gate's deny is the strictest
      // verdict, so no policy allow rule (project, flag or grant) can run a change.
      if (options.mode === "plan") {
        rein.hooks.toolGate.tapPromise(rein.plugin.name, async (call) => {
          const refusal = planRefusal(options.mode, call);
          return refusal === undefined ? undefined : { decision: "deny", reason: refusal };
        });
      }

      // One prompt at a time: parallel tool calls queue up behind the question on screen.
      let queue: Promise<unknown> = Promise.resolve();
      const serially = <T>(task: () => Promise<T>): Promise<T> => {
        const next = queue.then(task, task);
        queue = next.catch(() => undefined);
        return next;
      };

      const ask = async (request: PermissionRequest, context: HookContext): Promise<Answer | "closed"> => {
        const { signal } = context;
        const io = resolveIO();
        const reader = readerFor(io);
        // A child agent's question says whose it is: the answer is for that child.
        if (context.agent) io.output.write(`\n(asked in child agent ${context.agent.path})`);
        const text = mask(promptText(request, options.grantScope, shownFile));
        io.show?.(request, text, mask);
        io.output.write(text);
        for (let attempt = 0; attempt < 3; attempt++) {
          io.output.write("> ");
          const line = await reader.readLine(signal);
          if (line === undefined) return "closed";
          const answer = parseAnswer(line, grantsFile !== undefined);
          if (answer) return answer;
          io.output.write(
            `  please answer y (once), s (session)${grantsFile ? ", a (always in this project)" : ""} or n (deny); got ${JSON.stringify(line)}\n`,
          );
        }
        return "deny";
      };

      rein.hooks.permissionAsk.tapPromise(
        rein.plugin.name,
        async (request, context): Promise<PermissionAnswer | undefined> => {
          // Plan mode is read-only whoever asks: no prompt, no grant lets a change through.
          const refusal = planRefusal(options.mode, request.call);
          if (refusal) return { decision: "deny", reason: refusal };
          const grant = coveredBy(request, context);
          if (grant) {
            return { decision: "allow", reason: `allowed for this session (granted ${grant.grantedAt})` };
          }
          const always = projectCover(request);
          if (always) {
            return {
              decision: "allow",
              reason: `allowed in this project (granted ${always.grantedAt}, ${shownFile})`,
            };
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
            coveredBy(request, context) !== undefined || projectCover(request) !== undefined
              ? Promise.resolve("session" as const)
              : ask(request, context),
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
          // A grant could never cover a call with an unknown part: the answer allows this call only.
          if (notUnderstood(request.call))
            return {
              decision: "allow",
              reason: "allowed once at the prompt (not remembered: not fully understood)",
            };
          if (answer === "project" && grantsFile) {
            const granted = sign(
              grantKey(),
              {
                tool: request.call.name,
                askedBy: request.verdict.by,
                ...prefixScopeOf(request.call),
                grantedAt: new Date().toISOString(),
              },
              projectBinding(grantsFile),
            );
            projectGrants.push(granted);
            try {
              saveProjectGrant(grantsFile, granted);
            } catch (error) {
              const why = `could not save the project grant: ${(error as Error).message}`;
              rein.logger.warn(why);
              io.output.write(`  ${why}; it holds until this process ends\n`);
            }
            return {
              decision: "allow",
              reason: `allowed in this project at the prompt (${describeScope(request.call.name, granted)}, saved in ${shownFile})`,
            };
          }
          if (coveredBy(request, context) === undefined) {
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
            grants.record(context.session, grant);
          }
          return { decision: "allow", reason: "allowed for this session at the prompt" };
        },
      );
    },
  });
}

export default createPermissionsPlugin();
