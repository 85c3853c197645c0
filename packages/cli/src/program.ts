/**
 * The `rein` command line. Commands load their modules lazily so `rein --version`
 * and `--help` start without loading providers or the TypeScript loader.
 */
import { resolve } from "node:path";
import { Command, Option } from "commander";
import { addConfigFlags } from "./config/cli-flags.js";
import { CliError } from "./errors.js";
import { type GlobalOptions, version } from "./globals.js";

export type { GlobalOptions };

export function buildProgram(
  run: (task: (globals: GlobalOptions) => Promise<number>) => Promise<void>,
): Command {
  const program = new Command("rein")
    .description("Run configured LLM agents with policy, permission and tool plugins.")
    .version(version(), "-v, --version")
    .option(
      "-c, --config <file>",
      "config file (default: rein.config.* found from the working directory upward)",
    )
    .option("-C, --cwd <dir>", "working directory", process.cwd())
    .option("--debug", "show stack traces for errors", false)
    // Usage errors are one line and a hint (main.ts prints them), not the whole help.
    .configureOutput({ outputError: () => undefined })
    .exitOverride();

  addConfigFlags(program.command("run"))
    .description("run the configured agent; with no prompt on a TTY, an interactive chat")
    .argument("[prompt...]", "what the agent should do (or pipe it on stdin)")
    .option("--json", "print every event as one JSON line on stdout")
    .option("-s, --session <id>", "resume a session (id or unique prefix)")
    .option("--continue", "resume the latest session")
    .option("--script <file>", "use a scripted model: a JSON array of replies (offline)")
    .option("--chat", "interactive chat even when stdin is not a terminal (one prompt or /command per line)")
    .option(
      "--output-schema <file>",
      "the final answer must be JSON matching this JSON Schema (one repair turn; exit 3 if it still does not)",
    )
    .option("--resume", "continue the session's parked run once its approvals are answered (no prompt)")
    .action((words: string[], options) =>
      run(async (g) => (await import("./commands/run.js")).runCommand(words, options, g)),
    );

  // `rein chat` is what people type first: the chat `rein run` opens with no prompt on a terminal.
  addConfigFlags(program.command("chat"))
    .description(
      "interactive chat with the configured agent (rein run with no prompt; one prompt per line when piped)",
    )
    .option("-s, --session <id>", "resume a session (id or unique prefix)")
    .option("--continue", "resume the latest session")
    .option("--script <file>", "use a scripted model: a JSON array of replies (offline)")
    .action((options) =>
      run(async (g) => (await import("./commands/run.js")).runCommand([], { ...options, chat: true }, g)),
    );

  addConfigFlags(program.command("dev"))
    .description(
      "chat with the configured agent, reloading config and plugins when their files change (/reload too)",
    )
    .option("--session <id>", "resume a session (id or unique prefix)")
    .option("--continue", "resume the latest session")
    .option("--script <file>", "use a scripted model: a JSON array of replies (offline)")
    .action((options) =>
      run(async (g) =>
        (await import("./commands/run.js")).runCommand([], { ...options, chat: true, watch: true }, g),
      ),
    );

  program
    .command("init")
    .description("scaffold rein.config.ts and an example plugin with a test, or a plugin / tool-pack package")
    .option("--force", "overwrite existing files")
    .option("--plugin", "scaffold a standalone plugin package (build, test, changesets) in this folder")
    .option("--tool-pack", "scaffold a standalone tool-pack package in this folder")
    .option("--name <name>", "npm package name for --plugin / --tool-pack (default: the folder name)")
    .option(
      "--skill <name>",
      "scaffold an Agent Skill in .rein/skills/<name>/ (SKILL.md, references/, scripts/)",
    )
    .action((options) => run(async (g) => (await import("./commands/init.js")).initCommand(options, g)));

  program
    .command("trust")
    .description(
      "show what changed in the project's code since it was trusted, and trust it (the trust record)",
    )
    .option("-y, --yes", "trust without asking (scripts); the changes are still listed")
    .action((options) => run(async (g) => (await import("./commands/trust.js")).trustCommand(options, g)));

  program
    .command("plugins")
    .description("the loaded plugins: what each taps (hook, stage) and the tools each adds")
    .option("--json", "as JSON")
    .action((options) =>
      run(async (g) => (await import("./commands/plugins.js")).pluginsCommand(options, g)),
    );

  program
    .command("tools")
    .description("tools with their parameter schemas and whether they are active")
    .option("--json", "as JSON")
    .action((options) => run(async (g) => (await import("./commands/tools.js")).toolsCommand(options, g)));

  const skills = program.command("skills").description("Agent Skills: list, show and validate them");
  skills
    .command("list")
    .description("the skills the agent sees: name, source, description; shadowed and invalid ones")
    .option("--json", "as one JSON document")
    .action((options) => run(async (g) => (await import("./commands/skills.js")).listSkills(options, g)));
  skills
    .command("show")
    .description("one skill's fields, files and body")
    .argument("<name>", "the skill's name")
    .action((name: string) => run(async (g) => (await import("./commands/skills.js")).showSkill(name, g)));
  skills
    .command("validate")
    .description("check skills against the Agent Skills specification (exit 1 if one is invalid)")
    .argument(
      "[paths...]",
      "SKILL.md files, skill folders or folders of skills (default: every configured source)",
    )
    .action((paths: string[]) =>
      run(async (g) => (await import("./commands/skills.js")).validateSkills(paths, g)),
    );

  const sessions = program.command("sessions").description("browse, fork and export sessions");
  sessions
    .command("list")
    .description("sessions, newest first")
    .option("--json", "as JSON")
    .action((options) => run(async (g) => (await import("./commands/sessions.js")).listSessions(options, g)));
  sessions
    .command("show")
    .description("the messages, tool calls and decisions of a session's active branch")
    .argument("<id>", "session id or unique prefix")
    .option("--json", "entries as JSON lines")
    .action((id: string, options) =>
      run(async (g) => (await import("./commands/sessions.js")).showSession(id, options, g)),
    );
  sessions
    .command("tree")
    .description("draw the session's branch tree with labels and the active leaf")
    .argument("<id>", "session id or unique prefix")
    .action((id: string) => run(async (g) => (await import("./commands/sessions.js")).treeSession(id, g)));
  sessions
    .command("fork")
    .description("copy a session's branch up to an entry into a new session")
    .argument("<id>", "session id or unique prefix")
    .argument("[entry]", "entry id to fork at (default: the active leaf)")
    .action((id: string, entry: string | undefined) =>
      run(async (g) => (await import("./commands/sessions.js")).forkSession(id, entry, g)),
    );
  const exportCommand = (command: Command, description: string) =>
    command
      .description(description)
      .argument("<id>", "session id or unique prefix")
      .addOption(
        new Option("--format <format>", "output format (jsonl: a session file for `sessions import`)")
          .choices(["md", "html", "jsonl"])
          .default("md"),
      )
      .option("--html", "shorthand for --format html")
      .option("-o, --out <file>", "write to a file instead of stdout")
      .action((id: string, options) =>
        run(async (g) => (await import("./commands/export.js")).exportSession(id, options, g)),
      );
  exportCommand(
    sessions.command("export"),
    "export a session as Markdown (default), a standalone HTML page or a JSONL session file",
  );
  sessions
    .command("import")
    .description("copy a JSONL session file into the configured store (JSONL or PostgreSQL), same id")
    .argument("<file>", "a session file (e.g. from `rein sessions export <id> --format jsonl -o file`)")
    .action((file: string) =>
      run(async (g) => (await import("./commands/sessions.js")).importSession(file, g)),
    );

  // `rein export` is what people type first: the same command as `rein sessions export`.
  exportCommand(program.command("export"), "export a session (the same as rein sessions export)");

  const approvals = program
    .command("approvals")
    .description(
      "tool calls parked for a person's approval (approvals: { park: true }): list and answer them",
    );
  approvals
    .command("list")
    .description("pending approvals, oldest first")
    .option("--all", "answered and closed ones too")
    .option("-s, --session <id>", "only this session")
    .option("--json", "one JSON object per line")
    .action((options) =>
      run(async (g) => (await import("./commands/approvals.js")).listApprovals(options, g)),
    );
  for (const [name, decision, what] of [
    ["approve", "allow", "approve a parked call: the resumed run executes exactly it"],
    ["deny", "deny", "deny a parked call: the resumed run gives the model your reason"],
  ] as const) {
    approvals
      .command(name)
      .description(what)
      .argument("<id>", "approval id (from rein approvals list)")
      .option("--reason <text>", "why (recorded; for deny, the tool result the model reads)")
      .option("--hash <sha256>", "the hash you were shown: refused if the parked call's differs")
      .option("--by <name>", "who answers (default person:<your user name>)")
      .action((id: string, options) =>
        run(async (g) => (await import("./commands/approvals.js")).answerApproval(decision, id, options, g)),
      );
  }

  program
    .command("worker")
    .description(
      "take prompt jobs from the pg-boss queue and run them, one run per session across all workers",
    )
    .option(
      "--db <url>",
      "the queue's PostgreSQL database (default env REIN_QUEUE_URL, else the postgres session store's)",
    )
    .option("--expire <seconds>", "an active job older than this counts as lost and is retried (default 900)")
    .option(
      "--grace <seconds>",
      "on SIGTERM, how long the current runs may take to finish before they are aborted (default 30)",
    )
    .option("--poll <seconds>", "seconds between polls for new jobs (default 1)")
    .option(
      "--lease <seconds>",
      "a worker that stops responding loses its jobs and session locks after this long (default 30, at least 10)",
    )
    .option("--concurrency <runs>", "runs at once in this worker, each on its own session (default 8)")
    .action((options) => run(async (g) => (await import("./commands/worker.js")).workerCommand(options, g)));

  program
    .command("submit")
    .description(
      "queue a prompt for rein worker (a new session unless --session); --follow streams its events",
    )
    .argument("<prompt...>", "what the agent should do")
    .option("-s, --session <id>", "the session to continue (id or unique prefix)")
    .option(
      "--db <url>",
      "the queue's PostgreSQL database (default env REIN_QUEUE_URL, else the postgres session store's)",
    )
    .option("--follow", "stream the run's events until it ends; exit like rein run")
    .option("--json", "with --follow: every notice as one JSON line")
    .action((words: string[], options) =>
      run(async (g) => (await import("./commands/submit.js")).submitCommand(words, options, g)),
    );

  program
    .command("replay")
    .description(
      "re-run a session's tool calls through the current stack, with its budgets, grants and answers (no model, no tools); exit 1 if any verdict changed",
    )
    .argument(
      "[sessions...]",
      "session id, unique prefix, or path to a .jsonl file (several with --coverage)",
    )
    .option("--json", "one JSON line per call (with --coverage: the report as JSON)")
    .option(
      "--isolated",
      "decide each call alone, as in a fresh session (no budgets, grants or answers carried over)",
    )
    .option("--coverage", "report each rule's hits, rules never matched and calls decided by a default")
    .option("--all", "with --coverage: every recorded session")
    .option("--fail-on-default", "with --coverage: exit 1 when a call was decided by a default verdict")
    .action((ids: string[], options) =>
      run(async (g) => (await import("./commands/replay.js")).replayCommand(ids, options, g)),
    );

  addConfigFlags(program.command("config"))
    .description(
      "the merged config of every layer (user, project, local, flags, managed), with where each value came from",
    )
    .option("--json", "as JSON")
    .action((options) => run(async (g) => (await import("./commands/config.js")).configCommand(options, g)));

  program
    .command("check")
    .description(
      "decide one tool call with the configured stack (no model, no tool run) and print every tap's answer; exit 0 allow, 1 deny, 2 ask",
    )
    .argument(
      "[call]",
      "tool(primary argument), a tool name with --arg, a JSON call, or - / nothing for JSON on stdin",
    )
    .option("--arg <key=value>", "an argument: key=value (string) or key:=json; repeatable", collect, [])
    .option("--json", "the decision and its trail as one JSON document")
    .option(
      "--as-child <agent>",
      "decide as a child agent started by this agent config (@rein/tools-task's agents; default: none)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 allow, 1 deny, 2 ask (not answered: no terminal or --json),\n64 usage, 70 the stack failed on the call, 78 config, plugin or model errors.",
    )
    // `rein check` documents its own exit codes: a usage error is 64, never 2 (ask).
    .exitOverride((error) => {
      if (error.exitCode === 0) throw error;
      throw new CliError("usage", error.message.replace(/^error:\s*/, ""), {
        exitCode: 64,
        hint: "see rein check --help",
      });
    })
    .action((call: string | undefined, options) =>
      run(async (g) => (await import("./commands/check.js")).checkCommand(call, options, g)),
    );

  program
    .command("doctor")
    .description("check the config, plugins, options, model and credentials")
    .action(() => run(async (g) => (await import("./commands/doctor.js")).doctorCommand(g)));

  const mcp = program
    .command("mcp")
    .description("Model Context Protocol: Rein's gates in front of any MCP client");
  mcp
    .command("serve")
    .description(
      "serve the configured tools over MCP (stdio, or --http on 127.0.0.1), every call through the plugins",
    )
    .option("--http <port>", "Streamable HTTP on 127.0.0.1:<port> (0: any free port) instead of stdio")
    .option(
      "--token-env <name>",
      "environment variable with the HTTP bearer token (default REIN_MCP_TOKEN, else random)",
    )
    .option("--hide-denied", "leave tools the gates deny outright out of tools/list")
    .option(
      "--allow-origin <origin>",
      "with --http: also accept browser requests from this origin (scheme://host[:port]; repeatable; loopback origins always pass)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action((options) =>
      run(async (g) => (await import("./commands/mcp-serve.js")).mcpServeCommand(options, g)),
    );

  const hook = program
    .command("hook")
    .description("Rein's policy behind Claude Code's, Codex's and Gemini CLI's hooks");
  for (const agent of ["claude-code", "codex", "gemini"]) {
    hook
      .command(agent)
      .description(
        `answer one ${agent} hook event (its JSON on stdin) with the configured stack; exit 2 blocks`,
      )
      .option(
        "--timeout <ms>",
        "how long the stack may take to decide (default 20000); then the call is blocked",
      )
      .option(
        "--on-failure <what>",
        "block (default): a hook that cannot decide blocks; continue: it leaves the call to the agent",
      )
      .option(
        "--project <dir>",
        "the project whose stack decides even when the agent's cwd leaves it (rein hook install writes it)",
      )
      .action((options) =>
        run(async (g) => (await import("./commands/hook.js")).hookCommand(agent, options, g)),
      );
  }
  hook
    .command("serve")
    .description(
      "answer hook events over HTTP on 127.0.0.1 (Claude Code's http hook type) with one stack built at start",
    )
    .option("--port <port>", "port on 127.0.0.1 (default 0: any free port, printed)")
    .option(
      "--token-env <name>",
      "environment variable with the bearer token (default REIN_HOOK_TOKEN, else random)",
    )
    .option(
      "--timeout <ms>",
      "how long the stack may take per event (default 20000); then the call is denied",
    )
    .action((options) =>
      run(async (g) => (await import("./commands/hook-serve.js")).hookServeCommand(options, g)),
    );
  hook
    .command("install")
    .description(
      "write Rein's hook entries into an agent's settings (merged; --uninstall removes only Rein's)",
    )
    .argument("<agent>", "claude-code, codex or gemini")
    .option(
      "--project",
      "the project's settings (default): .claude/settings.json, .codex/config.toml, .gemini/settings.json",
    )
    .option("--user", "the user's settings (~/.claude, $CODEX_HOME or ~/.codex, ~/.gemini)")
    .option("--uninstall", "remove Rein's entries, keep everything else")
    .option("--command <command>", "the hook command to write (default: this rein, by absolute path)")
    .option("--timeout <seconds>", "how long the agent waits for the hook (default 30)")
    .action((agent: string, options) =>
      run(async (g) => (await import("./commands/hook-install.js")).hookInstallCommand(agent, options, g)),
    );

  program
    .command("models")
    .description("the models pi-ai knows, and the configured ones")
    .option("-p, --provider <name>", "only this provider")
    .option("--json", "as JSON")
    .action((options) => run(async (g) => (await import("./commands/models.js")).modelsCommand(options, g)));

  return program;
}

export { globalsFrom };

const collect = (value: string, previous: string[]): string[] => [...previous, value];

function globalsFrom(program: Command): GlobalOptions {
  const opts = program.opts<{ config?: string; cwd: string; debug: boolean }>();
  // Relative `-C` is taken from where rein was started; everything after works with absolute paths.
  return { cwd: resolve(opts.cwd), config: opts.config, debug: opts.debug };
}
