/**
 * The structural operations `skill()` and `template()` (spec "Phases": they
 * start only from idle, like `prompt()`, and otherwise reject with `busy`), and
 * `activateSkill()`, what the `skill` tool calls during a run. A layer of the
 * AgentHarness class between its live config and its runs.
 *
 * Invariants: a name is checked against the live config before the phase is
 * taken (an unknown one rejects with `invalid_argument` and emits nothing); the
 * invocation record (name, path, sha256, arguments) is the run's first entry,
 * before the next-turn queue's messages and the invocation's user message; an
 * activation during a run is a pending write, and its narrowing applies from the
 * next turn's snapshot (the running turn keeps its own).
 */
import { invalidArgument } from "../errors.js";
import type { RunOutcome } from "../events/event-types.js";
import { HarnessConfig } from "../harness/harness-config.js";
import type { ResumeState } from "../harness/parked-calls.js";
import type { PhaseGate } from "../harness/phase-gate.js";
import { promptMessage } from "../harness/prompt-input.js";
import { type ActiveRun, executeResume, executeRun, type RunPort } from "../harness/run.js";
import { refuseWhileParked } from "../session/approvals.js";
import type { EntryInput } from "../session/entries.js";
import type { Session } from "../session/session.js";
import { argumentList, type InvocationArgs } from "./arguments.js";
import {
  findResource,
  recordedSkills,
  SKILL_ENTRY,
  skillRecord,
  skillText,
  templateRecord,
  templateText,
} from "./invocation.js";
import type { SkillResource } from "./resource-types.js";

interface Invocation {
  record: EntryInput;
  text: string;
  skill?: SkillResource;
}

export abstract class ResourceRuns extends HarnessConfig {
  abstract readonly session: Session;
  protected abstract readonly gate: PhaseGate;
  protected abstract readonly runPort: RunPort;
  protected abstract active: ActiveRun | undefined;
  protected abstract startRun(
    name: string,
    body: (run: ActiveRun) => Promise<RunOutcome>,
  ): Promise<RunOutcome>;

  /**
   * Starts a run from a skill: its body (arguments expanded) is the user message,
   * after the next-turn queue; the skill is active for the whole run (its
   * `allowed-tools` narrow every turn's tools). Rejects with `busy` when not
   * idle, `invalid_argument` for a name the live config's `skills` lacks.
   */
  skill(name: string, args?: InvocationArgs): Promise<RunOutcome> {
    return this.invoke("skill", () => {
      const skill = findResource(this.config.skills, name, "skill");
      const list = argumentList(args);
      return { record: skillRecord(skill, list, "invoke", ""), text: skillText(skill, list), skill };
    });
  }

  /** Starts a run from a prompt template: its expanded body is the user message (as `skill()`). */
  template(name: string, args?: InvocationArgs): Promise<RunOutcome> {
    return this.invoke("template", () => {
      const template = findResource(this.config.templates, name, "prompt template");
      const list = argumentList(args);
      return { record: templateRecord(template, list), text: templateText(template, list) };
    });
  }

  /** `template()` under the name the harness spec gives it. */
  promptTemplate(name: string, args?: InvocationArgs): Promise<RunOutcome> {
    return this.template(name, args);
  }

  /**
   * Activates a skill of the running turn's snapshot for the rest of the run and
   * returns the text the model reads (the `skill` tool). `invalid_argument`
   * outside a run or for a name the snapshot lacks.
   */
  activateSkill(name: string, args?: InvocationArgs): { skill: SkillResource; text: string } {
    const run = this.active;
    if (!run) throw invalidArgument("activateSkill works during a run (the skill tool); skill() starts one");
    const skill = findResource(run.snapshot?.skills ?? this.config.skills, name, "skill");
    const list = argumentList(args);
    if (!run.skills.some((active) => active.name === skill.name)) run.skills.push(skill);
    this.writer.record(skillRecord(skill, list, "tool", run.runId));
    return { skill, text: skillText(skill, list) };
  }

  /**
   * A resumed run goes on with the skills its parked run had active (from their
   * records, recorded again under the new run), so their narrowing holds after the
   * approval too.
   */
  protected resumeRun(state: ResumeState | undefined): (run: ActiveRun) => Promise<RunOutcome> {
    return (run) => {
      for (const skill of state?.runId ? recordedSkills(this.session.branch(), state.runId) : []) {
        run.skills.push(skill);
        this.session.append(skillRecord(skill, [], "resume", run.runId));
      }
      return executeResume(this.runPort, run, state as ResumeState);
    };
  }

  private invoke(name: "skill" | "template", prepare: () => Invocation): Promise<RunOutcome> {
    let invocation: Invocation | undefined;
    if (this.gate.phase === "idle") {
      try {
        refuseWhileParked(this.session, name);
        invocation = prepare();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // Not idle: startRun rejects with `busy` before the body runs.
    return this.startRun(name, (run) => {
      const { record, text, skill } = invocation as Invocation;
      if (skill) run.skills.push(skill);
      // The harness's own write at the run's start (not pending): before the run's messages.
      if (record.type === "custom" && record.customType === SKILL_ENTRY)
        this.session.append({ ...record, data: { ...(record.data as object), runId: run.runId } });
      else this.session.append(record);
      return executeRun(this.runPort, run, promptMessage(text));
    });
  }
}
