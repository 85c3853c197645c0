/**
 * The interactive chat of `rein run`: each line is a prompt, or a slash command
 * for the session (`/compact`, `/tree`, `/fork`, `/label`, ...). Reads lines from
 * any stream, so it works on a terminal and, with `--chat`, from a pipe.
 *
 * Invariant (a terminal): the chat reads the terminal only between prompts.
 * While a prompt or command runs, its line reader is closed, so the terminal is
 * back in its normal (cooked) mode: whatever asks the person meanwhile (the
 * permission prompt) reads its own answer - Enter ends it - and that answer never
 * reaches the chat, so it is never sent to the model. Lines typed ahead stay in
 * the terminal for the next chat prompt.
 */
import { createInterface, type Interface } from "node:readline";
import type { Agent } from "../agent/build-agent.js";
import type { LiveReload } from "../agent/live-reload.js";
import {
  parseTemplateCall,
  readTemplate,
  recordTemplateCall,
  templateNames,
} from "../agent/prompt-templates.js";
import { ExitCode } from "../errors.js";
import { drawTree } from "../ui/session-tree.js";
import type { Terminal } from "../ui/terminal.js";
import { lastLine, resumeHint } from "../ui/usage-line.js";
import { formatUsage, type UsageMark, usageMark, usageReport } from "../usage/usage-totals.js";

const HELP = `/compact [instructions]   summarise older turns to free context
/tree                      draw the session tree (labels, ◀ leaf)
/tree <entry> [--summarize] move the leaf to an entry (optionally summarising the branch you leave)
/fork [entry]              copy the branch up to an entry (default: leaf) into a new session
/label <entry|.> <text>    label an entry (. = the leaf); "/label <entry> -" removes it
/reload                    reload the config and plugins (the session is kept)
/session                   show the session id
/cost                      tokens and cost of the last run and of the session
/<template> [args]         a prompt template from .rein/prompts/<template>.md
/exit                      leave the chat
`;

/**
 * The chat's own line reader. On a terminal it holds the input only while the
 * chat waits for a line (`release()` closes it while work runs; lines already
 * typed, e.g. a multi-line paste, are kept in order). From a pipe it reads the
 * whole stream with one reader (nothing else reads a pipe).
 */
class ChatLines {
  private readonly lines: string[] = [];
  private reader: Interface | undefined;
  private ended = false;
  private wake: (() => void) | undefined;

  constructor(private readonly input: NodeJS.ReadStream) {}

  get terminal(): boolean {
    return this.input.isTTY === true;
  }

  async next(): Promise<string | undefined> {
    while (this.lines.length === 0 && !this.ended) {
      this.open();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return this.lines.shift();
  }

  /** Gives the terminal back (cooked mode, no reader attached) until the next `next()`. */
  release(): void {
    if (!this.terminal || this.reader === undefined) return;
    const reader = this.reader;
    this.reader = undefined;
    reader.close();
  }

  close(): void {
    const reader = this.reader;
    this.reader = undefined;
    reader?.close();
  }

  private open(): void {
    if (this.reader !== undefined) return;
    const reader = createInterface({ input: this.input, terminal: this.terminal });
    this.reader = reader;
    reader.on("line", (line) => {
      this.lines.push(line);
      this.wake?.();
    });
    reader.on("close", () => {
      // Our own release is not the end of the input; Ctrl-D or the end of a pipe is.
      if (this.reader === reader) {
        this.reader = undefined;
        this.ended = true;
      }
      this.wake?.();
    });
  }
}

export async function chatLoop(agent: Agent, term: Terminal, live?: LiveReload): Promise<number> {
  const lines = new ChatLines(process.stdin);
  const { c } = term;
  term.err.write(
    c.dim(`rein chat · session ${agent.session.id.slice(0, 8)} · /help for commands, /exit to leave\n`),
  );
  let status: number = ExitCode.ok;
  /** Where the last prompt's run began, for `/cost`. */
  let lastRun: UsageMark | undefined;
  const ask = () => term.err.write(c.bold("› "));
  ask();
  for (let raw = await lines.next(); raw !== undefined; raw = await lines.next()) {
    const line = raw.trim();
    if (line === "/exit" || line === "/quit") break;
    if (line !== "") {
      lines.release();
      try {
        await live?.settle();
        if (line === "/reload" && live) await live.reload();
        else {
          const text = line.startsWith("/") ? templatePrompt(agent, line) : line;
          if (text === undefined) await slashCommand(agent, term, line, lastRun);
          else {
            lastRun = usageMark(agent.session);
            const outcome = await agent.harness.prompt(text);
            status = outcome.status === "completed" ? ExitCode.ok : ExitCode.failed;
            lastLine(agent.session, term, lastRun, resumeHint(agent.model.scripted));
          }
        }
      } catch (error) {
        term.err.write(`${c.red("✗")} ${(error as Error).message}\n`);
        status = ExitCode.failed;
      }
    }
    ask();
  }
  lines.close();
  return status;
}

const BUILTIN = new Set([
  "/help",
  "/session",
  "/cost",
  "/compact",
  "/tree",
  "/fork",
  "/label",
  "/reload",
  "/exit",
  "/quit",
]);

/** A chat line `/name args` as a template's text (recorded in the session); undefined when not a template. */
function templatePrompt(agent: Agent, line: string): string | undefined {
  const root = agent.loaded.dir;
  const call = parseTemplateCall(root, line, { strict: false, skip: BUILTIN });
  if (!call) return undefined;
  recordTemplateCall(agent.harness, root, call);
  return call.text;
}

async function slashCommand(
  agent: Agent,
  term: Terminal,
  line: string,
  lastRun: UsageMark | undefined,
): Promise<void> {
  const [command, ...words] = line.split(/\s+/);
  const { harness, session } = agent;
  const resolveEntry = (word: string | undefined) =>
    word === undefined || word === "." ? session.leafId : word;
  switch (command) {
    case "/help": {
      term.err.write(HELP);
      const names = templateNames(agent.loaded.dir);
      if (names.length > 0) term.err.write(`templates: ${names.map((n) => `/${n}`).join(", ")}\n`);
      for (const name of names) {
        const template = readTemplate(agent.loaded.dir, name);
        const usage = `/${name}${template?.argumentHint ? ` ${template.argumentHint}` : ""}`;
        term.err.write(`${usage.padEnd(27)}${template?.description ?? ""}\n`);
      }
      return;
    }
    case "/cost": {
      const usage = usageReport(session, lastRun ?? usageMark(session));
      const requests = (n: number) => `${n} request${n === 1 ? "" : "s"}`;
      if (lastRun) term.out.write(`last run  ${formatUsage(usage.run)} (${requests(usage.run.requests)})\n`);
      term.out.write(`session   ${formatUsage(usage.session)} (${requests(usage.session.requests)})\n`);
      return;
    }
    case "/session":
      term.out.write(`${session.id}\n`);
      return;
    case "/compact": {
      const instructions = words.join(" ");
      const outcome = await harness.compact(instructions ? { instructions } : {});
      term.err.write(
        `compaction ${outcome.status}${"reason" in outcome && outcome.reason ? `: ${outcome.reason}` : ""}\n`,
      );
      return;
    }
    case "/tree": {
      if (words.length === 0) {
        for (const row of drawTree(session, term.co)) term.out.write(`${row}\n`);
        return;
      }
      const summarize = words.includes("--summarize");
      const target = resolveEntry(words.find((w) => w !== "--summarize"));
      const outcome = await harness.navigateTree(target ?? null, { summarize });
      term.err.write(
        `moved to ${target}${outcome.status === "cancelled" ? ` — cancelled: ${outcome.reason ?? ""}` : ""}\n`,
      );
      return;
    }
    case "/fork": {
      const at = resolveEntry(words[0]);
      if (!at) throw new Error("nothing to fork: the session is empty");
      // A PostgreSQL store forks in the database, once every write of this session is stored.
      if (agent.sessions.kind !== "jsonl") await agent.session.whenStored();
      const forked =
        agent.sessions.kind === "jsonl"
          ? harness.fork(at, agent.store)
          : await agent.sessions.fork(agent.session.id, at);
      term.out.write(`${forked.id}\n`);
      term.err.write(
        term.c.dim(`forked at ${at}; resume it with rein run --session ${forked.id.slice(0, 8)}\n`),
      );
      await forked.close();
      return;
    }
    case "/label": {
      const target = resolveEntry(words[0]);
      const text = words.slice(1).join(" ");
      if (!target || text === "") throw new Error("usage: /label <entry|.> <text>  (or - to remove)");
      harness.label(target, text === "-" ? null : text);
      term.err.write(`labelled ${target}\n`);
      return;
    }
    default:
      throw new Error(
        `unknown command ${command}: neither built in nor a template in .rein/prompts; /help lists them`,
      );
  }
}
