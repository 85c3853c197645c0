/**
 * `rein run [prompt]`: runs the configured agent and keeps the session.
 * Ctrl-C aborts the run cleanly (the session stays consistent: every tool call
 * gets its result); a second Ctrl-C exits at once (writes are whole lines, and a
 * dead process's lock is taken over on the next open).
 */
import { readFileSync } from "node:fs";
import { isHarnessError, type RunOutcome } from "@rein/harness";
import type { ReinConfig, ScriptStep } from "@rein/sdk";
import { type Agent, buildAgent } from "../agent/build-agent.js";
import { liveReload } from "../agent/live-reload.js";
import { parseTemplateCall, runTemplateCall, type TemplateCall } from "../agent/prompt-templates.js";
import { type ConfigFlags, flagsLayer } from "../config/cli-flags.js";
import { ExitCode, runFailed, sessionParked, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { type Checked, checkedRun, loadOutputSchema, type OutputSchema } from "../output/output-schema.js";
import { exitWhenDone } from "../prompt-exit.js";
import { parseSkillCall, type SkillCall } from "../skills/skill-call.js";
import { findSkills } from "../skills/skill-sources.js";
import { onStdoutClosed } from "../ui/closed-pipe.js";
import { type JsonOut, reserveStdout } from "../ui/json-stdout.js";
import { attachRenderer } from "../ui/run-renderer.js";
import { type Terminal, terminal } from "../ui/terminal.js";
import { lastLine, resumeHint } from "../ui/usage-line.js";
import { type UsageMark, usageMark, usageReport } from "../usage/usage-totals.js";

export interface RunOptions extends ConfigFlags {
  json?: boolean;
  session?: string;
  continue?: boolean;
  script?: string;
  /** Chat even when stdin is not a terminal (lines from a pipe). */
  chat?: boolean;
  /** Reload config and plugins when files in the config's folder change (`rein dev`). */
  watch?: boolean;
  /** A JSON Schema file the final answer must match (exit 3 when it still does not after one repair turn). */
  outputSchema?: string;
  /** Continue the session's parked run once its approvals are answered (no prompt). */
  resume?: boolean;
}

export function readScript(file: string, cwd: string): ScriptStep[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(new URL(file, `file://${cwd}/`), "utf8"));
  } catch (error) {
    throw usageError(`--script ${file}: ${(error as Error).message}`, "expected a JSON array of replies");
  }
  if (!Array.isArray(parsed)) throw usageError(`--script ${file}: expected a JSON array of replies`);
  return parsed as ScriptStep[];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

export async function runCommand(
  promptWords: string[],
  options: RunOptions,
  globals: GlobalOptions,
): Promise<number> {
  // Once this returns, the session is closed and the plugins disposed: nothing is left to wait for.
  exitWhenDone();
  if (options.session && options.continue) throw usageError("use either --session or --continue, not both");
  const script = options.script ? readScript(options.script, globals.cwd) : undefined;
  let prompt = promptWords.join(" ").trim();
  if (options.resume) checkResume(options, prompt);
  if (options.watch && prompt !== "")
    throw usageError("rein dev is a chat: give prompts on its input, not as arguments");
  const chat =
    options.resume !== true &&
    (options.chat === true ||
      options.watch === true ||
      (prompt === "" && process.stdin.isTTY === true && !options.json));
  if (prompt === "" && !chat && !options.resume && process.stdin.isTTY !== true) prompt = await readStdin();
  if (prompt === "" && !chat && !options.resume)
    throw usageError("no prompt given", 'rein run "what to do" (or pipe it on stdin)');

  const flags = flagsLayer(options);
  if (options.outputSchema && chat)
    throw usageError("--output-schema needs a prompt: it checks one run's answer");
  const schema = options.outputSchema ? loadOutputSchema(options.outputSchema, globals.cwd) : undefined;
  const term = terminal();
  // Reserved before plugins load: their console output must not mix into the JSON lines.
  const json: JsonOut | undefined = options.json ? reserveStdout() : undefined;
  let template: TemplateCall | undefined;
  let skill: SkillCall | undefined;
  try {
    const agent = await buildAgent({
      cwd: globals.cwd,
      configPath: globals.config,
      sessionId: options.session,
      continueLatest: options.continue === true,
      script,
      flags,
      warn: (message) => term.err.write(`${term.c.yellow("!")} ${message}\n`),
      // A `/template` or `/skill` that does not exist fails before a session is created.
      check: (loaded, plugins) => {
        if (chat) return;
        template = parseTemplateCall(loaded.dir, prompt, { strict: false, words: promptWords });
        if (template || !prompt.startsWith("/")) return;
        skill = parseSkillCall(findSkills(loaded, plugins).skills, prompt, promptWords);
        if (!skill) parseTemplateCall(loaded.dir, prompt, { strict: true, words: promptWords });
      },
    });
    return await runAgent(agent, {
      prompt,
      template,
      skill,
      schema,
      resume: options.resume === true,
      chat,
      json,
      term,
      watch: options.watch === true,
      reload: { cwd: globals.cwd, configPath: globals.config, flags },
    });
  } finally {
    json?.release();
  }
}

async function runAgent(
  agent: Agent,
  run: {
    prompt: string;
    /** The prompt as a template call (`rein run /name args`). */
    template: TemplateCall | undefined;
    /** The prompt as a skill invocation (`rein run /name args`). */
    skill: SkillCall | undefined;
    schema: OutputSchema | undefined;
    resume: boolean;
    chat: boolean;
    json: JsonOut | undefined;
    term: Terminal;
    /** `rein dev`: reload plugins and config when their files change. */
    watch: boolean;
    reload: { cwd: string; configPath: string | undefined; flags?: ReinConfig | undefined };
  },
): Promise<number> {
  const { term, json } = run;
  // `/name args`: the first run starts from the template or skill (the harness records which).
  const template = run.template;
  const skill = run.skill;
  const invoke = template
    ? () => runTemplateCall(agent.harness, agent.loaded.dir, template)
    : skill
      ? () => agent.harness.skill(skill.name, skill.args)
      : undefined;
  if (!json && !run.schema && !run.resume && useTui()) {
    // Loaded only here: the terminal UI (pi-tui, highlighting) costs nothing elsewhere.
    const { runTui } = await import("../tui/tui-app.js");
    try {
      return await runTui(agent, {
        prompt: run.chat ? undefined : (run.template?.text ?? run.prompt),
        invoke,
        watch: run.watch,
        reload: run.reload,
      });
    } finally {
      await agent.dispose();
    }
  }
  const detach = attachRenderer(agent.harness, term, {
    json,
    endpoint: agent.model.endpoint,
    // With --output-schema stdout carries only the checked JSON: the answer streams to stderr.
    ...(run.schema ? { answerTo: term.err } : {}),
  });
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts === 1 && agent.harness.phase !== "idle") {
      if (!json) term.err.write(`\n${term.c.yellow("■ stopping… (Ctrl-C again to quit)")}\n`);
      agent.harness.abort("interrupted by Ctrl-C");
      return;
    }
    process.exit(ExitCode.failed);
  };
  process.on("SIGINT", onInterrupt);
  // The reader of stdout went away (`| head`, `| grep -m1`): stop as on Ctrl-C, so every tool call gets its result.
  const offClosed = onStdoutClosed(() => {
    if (agent.harness.phase !== "idle") agent.harness.abort("stdout closed");
  });
  // A tool may wait on nothing but the abort signal; without a handle Node would end the process mid-run.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    if (run.chat) {
      const live = liveReload(agent, run.reload, term, { watch: run.watch });
      try {
        // The chat loop (readline, the session tree, slash commands) loads only for a chat.
        const { chatLoop } = await import("../chat/chat.js");
        return await chatLoop(agent, term, live);
      } finally {
        live.close();
      }
    }
    const mark = usageMark(agent.session);
    const text = run.template?.text ?? run.prompt;
    if (run.schema) agent.instructions.appendix = [run.schema.instructions];
    const { outcome, output } = run.schema
      ? await checkedRun(
          run.schema,
          (t) => promptOnce(agent, t, false, t === text ? invoke : undefined),
          text,
          (errors) => {
            if (!json)
              term.err.write(
                `${term.c.yellow("↻ the answer does not match")} ${run.schema?.file}: ${errors.join("; ")}; asking once more\n`,
              );
          },
        )
      : { outcome: await promptOnce(agent, text, run.resume, invoke), output: undefined };
    let code = exitCodeOf(outcome, term, json !== undefined);
    if (code === ExitCode.ok && output && !output.ok) {
      code = ExitCode.output;
      if (!json)
        term.err.write(
          `${term.c.red("✗ the answer does not match")} ${run.schema?.file}:\n${output.errors.map((e) => `  ${e}`).join("\n")}\n`,
        );
    }
    if (json) json.write(`${JSON.stringify(endEvent(agent, mark, outcome, code, output))}\n`);
    else {
      if (code === ExitCode.ok && output?.ok) term.out.write(`${JSON.stringify(output.value)}\n`);
      lastLine(agent.session, term, mark, resumeHint(agent.model.scripted));
    }
    return code;
  } finally {
    clearInterval(keepAlive);
    offClosed();
    process.off("SIGINT", onInterrupt);
    detach();
    await agent.dispose();
  }
}

/**
 * The terminal UI runs when the person is at a terminal: stdin, stdout and stderr
 * all TTYs. `REIN_TUI=0` keeps the plain line interface there (a screen reader, a
 * terminal pi-tui draws badly); pipes and `--json` always get the plain one.
 */
function useTui(): boolean {
  if (process.env.REIN_TUI === "0") return false;
  return process.stdin.isTTY === true && process.stdout.isTTY === true && process.stderr.isTTY === true;
}

async function promptOnce(
  agent: Agent,
  prompt: string,
  resume: boolean,
  invoke?: () => Promise<RunOutcome>,
): Promise<RunOutcome> {
  try {
    if (invoke) return await invoke();
    return resume ? await agent.harness.resume() : await agent.harness.prompt(prompt);
  } catch (error) {
    if (isHarnessError(error, "parked")) throw sessionParked(error.message, error);
    if (resume && isHarnessError(error, "invalid_argument")) throw usageError(error.message);
    throw runFailed((error as Error).message, error);
  }
}

function checkResume(options: RunOptions, prompt: string): void {
  if (prompt !== "") throw usageError("--resume continues a parked run: give no prompt");
  if (!options.session && !options.continue)
    throw usageError("--resume needs the session: --session <id> (or --continue)");
  if (options.chat || options.watch) throw usageError("--resume runs once: not with --chat");
  if (options.outputSchema)
    throw usageError("--resume continues a run: --output-schema checks a prompt's answer");
}

function exitCodeOf(outcome: RunOutcome, term: Terminal, json: boolean): number {
  if (outcome.status === "completed") return ExitCode.ok;
  if (outcome.status === "parked") {
    if (!json) {
      for (const call of outcome.parked ?? []) {
        term.err.write(
          `${term.c.yellow("⏸ parked:")} ${call.toolName} waits for approval ${call.approvalId} (${call.askedBy}: ${call.reason})\n`,
        );
      }
      term.err.write(
        term.c.dim("answer with rein approvals approve|deny <id>, then rein run --session <id> --resume\n"),
      );
    }
    return ExitCode.parked;
  }
  if (!json && outcome.status === "blocked")
    term.err.write(`${term.c.red("✗ run blocked:")} ${outcome.reason ?? ""}\n`);
  return ExitCode.failed;
}

/** The `--json` stream's last line: how the command ended, the usage totals and the checked output. */
function endEvent(
  agent: Agent,
  mark: UsageMark,
  outcome: RunOutcome,
  code: number,
  output: Checked | undefined,
) {
  return {
    type: "end",
    status: outcome.status,
    ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
    exitCode: code,
    sessionId: agent.session.id,
    usage: usageReport(agent.session, mark),
    ...(output?.ok ? { output: output.value } : {}),
    ...(output && !output.ok ? { outputErrors: output.errors } : {}),
  };
}
