/**
 * The terminal UI of `rein run` / `rein chat` / `rein dev` on a TTY (pi-tui, main
 * screen: the transcript stays in the scrollback). Loaded only then (a dynamic
 * import in commands/run.ts), so other commands, pipes and `--json` never load it.
 *
 * Layout, top to bottom: the transcript (prompts, Markdown answers, tool blocks
 * with diffs), the permission dialog when one is open (in place of the editor),
 * the editor (history on ↑/↓, Shift-Enter or Ctrl-J for a new line, bracketed
 * paste), the status line. Ctrl-C aborts a run, a second Ctrl-C exits (idle: the
 * first clears the editor or warns); Ctrl-D on an empty editor exits; Ctrl-O
 * expands or collapses tool output.
 */
import {
  CombinedAutocompleteProvider,
  Container,
  Editor,
  matchesKey,
  ProcessTerminal,
  Text,
  TuiMainScreen,
} from "@earendil-works/pi-tui";
import type { RunOutcome } from "@rein/harness";
import { setHostPromptIO } from "@rein/plugin-permissions";
import type { Agent } from "../agent/build-agent.js";
import { type LiveReload, liveReload } from "../agent/live-reload.js";
import { readTemplate, templateNames } from "../agent/prompt-templates.js";
import { invocation } from "../chat/chat.js";
import { ExitCode } from "../errors.js";
import { colorsFor, type Terminal } from "../ui/terminal.js";
import { resumeHint, usageLine } from "../ui/usage-line.js";
import { type UsageMark, usageMark } from "../usage/usage-totals.js";
import { type ChatCommands, COMMANDS, chatCommands } from "./chat-commands.js";
import { dialogPromptIO, type PermissionDialog } from "./permission-dialog.js";
import { statusLine } from "./status-line.js";
import { editorTheme } from "./theme.js";
import { TranscriptView } from "./transcript-view.js";

export interface TuiRun {
  /** One prompt and exit (`rein run "…"`); undefined: a chat. */
  prompt?: string | undefined;
  /** That prompt as a template's or skill's invocation (`rein run /name args`), shown as `prompt`. */
  invoke?: (() => Promise<RunOutcome>) | undefined;
  watch: boolean;
  reload: Parameters<typeof liveReload>[1];
}

/** A Terminal whose writes land in the transcript (slash commands, reload reports). */
function transcriptTerminal(view: TranscriptView, c: Terminal["c"]): Terminal {
  const stream = {
    isTTY: true,
    columns: process.stdout.columns,
    write(chunk: unknown) {
      view.notice(String(chunk));
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { out: stream, err: stream, c, co: c, interactive: false };
}

export async function runTui(agent: Agent, run: TuiRun): Promise<number> {
  const c = colorsFor(process.stdout);
  const tui = new TuiMainScreen(new ProcessTerminal());
  const render = () => tui.requestRender();
  const view = new TranscriptView(agent.harness, run.reload.cwd, c, render);
  const term = transcriptTerminal(view, c);
  const chat = run.prompt === undefined;
  const editor = new Editor(tui, editorTheme(c));
  // `/` completes the commands and the project's prompt templates (no file completion).
  const templates = templateNames(agent.loaded.dir).map((name) => ({
    name,
    description: readTemplate(agent.loaded.dir, name)?.description ?? "prompt template",
  }));
  editor.setAutocompleteProvider(
    new CombinedAutocompleteProvider([...COMMANDS, ...templates], run.reload.cwd, null),
  );
  const slot = new Container();
  const status = new Text("", 0, 0);
  let working = false;
  let dialog: PermissionDialog | undefined;
  const refreshStatus = () => {
    const state = working ? c.yellow("● working") : c.green("● ready");
    status.setText(`${state}  ${statusLine(agent, c)}`);
    render();
  };

  tui.addChild(
    new Text(
      c.dim(
        `rein · session ${agent.session.id.slice(0, 8)}${chat ? " · /help for commands, /exit to leave" : ""}`,
      ),
      0,
      0,
    ),
  );
  tui.addChild(view);
  tui.addChild(slot);
  tui.addChild(status);
  const showEditor = () => {
    slot.clear();
    if (chat) {
      slot.addChild(editor);
      tui.setFocus(editor);
    }
    render();
  };

  setHostPromptIO(
    dialogPromptIO(
      c,
      (opened) => {
        dialog = opened;
        slot.clear();
        slot.addChild(opened);
        tui.setFocus(opened);
        render();
      },
      () => {
        dialog = undefined;
        showEditor();
      },
      (text) => view.notice(text),
    ),
  );
  const unsubscribe = agent.harness.subscribe(
    (event) => {
      view.observe(event);
      if (event.type === "agent_end" || event.type === "message_end") refreshStatus();
    },
    { owner: "rein-cli-tui" },
  );
  const live: LiveReload = liveReload(agent, run.reload, term, { watch: run.watch });

  let status_: number = ExitCode.ok;
  let lastRun: UsageMark | undefined;
  let interrupts = 0;
  let finish: ((code: number) => void) | undefined;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });

  /** Runs a prompt, or a template's or skill's invocation (`/name args`). */
  const prompt = async (input: string | (() => Promise<RunOutcome>)) => {
    working = true;
    refreshStatus();
    lastRun = usageMark(agent.session);
    try {
      const outcome = await (typeof input === "string" ? agent.harness.prompt(input) : input());
      status_ = outcome.status === "completed" ? ExitCode.ok : ExitCode.failed;
      if (outcome.status === "blocked") view.notice(`${c.red("✗ run blocked:")} ${outcome.reason ?? ""}`);
    } catch (error) {
      view.notice(`${c.red("✗")} ${(error as Error).message}`);
      status_ = ExitCode.failed;
    } finally {
      working = false;
      interrupts = 0;
      view.notice(c.dim(`${usageLine(agent.session, lastRun)} · ${resumeHint(agent.model.scripted)}`));
      refreshStatus();
    }
  };

  const commands: ChatCommands = chatCommands(
    agent,
    term,
    live,
    {
      lastRun: () => lastRun,
      changed: refreshStatus,
      exit: () => finish?.(status_),
    },
    run.reload,
  );

  editor.onSubmit = (raw) => {
    const line = raw.trim();
    if (line === "") return;
    if (working) {
      view.notice(c.yellow("a run is going: wait for it, or Ctrl-C to stop it"));
      return;
    }
    editor.addToHistory(raw);
    view.prompt(raw);
    void (async () => {
      try {
        await live.settle();
        if (await commands.handle(line)) return;
        if (!line.startsWith("/")) await prompt(raw);
        else {
          const invoke = invocation(agent, line);
          if (invoke === undefined) await commands.builtin(line);
          else await prompt(invoke);
        }
      } catch (error) {
        view.notice(`${c.red("✗")} ${(error as Error).message}`);
      }
      refreshStatus();
    })();
  };

  /** Ctrl-C (a key in raw mode) and SIGINT from outside: the first stops a run, a second quits. */
  const interrupt = () => {
    interrupts++;
    if (dialog) dialog.handleInput("n");
    if (working && interrupts === 1) {
      view.notice(c.yellow("■ stopping… (Ctrl-C again to quit)"));
      agent.harness.abort("interrupted by Ctrl-C");
    } else if (!working && interrupts === 1 && editor.getText() !== "") {
      editor.setText("");
      interrupts = 0;
      render();
    } else if (!working && interrupts === 1) {
      view.notice(c.dim("Ctrl-C again (or /exit) to quit"));
    } else {
      finish?.(working ? ExitCode.failed : status_);
    }
  };
  process.on("SIGINT", interrupt);

  tui.addInputListener((data) => {
    if (matchesKey(data, "ctrl+c")) {
      interrupt();
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+d") && !dialog && editor.getText() === "") {
      finish?.(status_);
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+o")) {
      view.toggleExpanded();
      return { consume: true };
    }
    if (!working) interrupts = 0;
    return undefined;
  });

  showEditor();
  refreshStatus();
  tui.start();
  try {
    if (!chat) {
      const text = run.prompt as string;
      view.prompt(text);
      await Promise.race([prompt(run.invoke ?? text), finished]);
      return status_;
    }
    return await finished;
  } finally {
    if (working) {
      agent.harness.abort("the terminal UI closed");
      await agent.harness.waitForIdle();
    }
    process.off("SIGINT", interrupt);
    unsubscribe();
    live.close();
    setHostPromptIO(undefined);
    // The last frame is drawn before the terminal is given back: it stays in the scrollback.
    if (!chat) slot.clear();
    tui.renderNow(true);
    tui.stop();
    process.stdout.write("\n");
  }
}
