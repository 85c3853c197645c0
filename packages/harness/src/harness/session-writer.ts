/**
 * The session writer: every write the harness makes to its session, in the
 * order the spec requires (spec "Save points and pending writes").
 *
 * Invariants: a write made while busy is journaled as pending and committed at
 * the next save point, at settle or in failure cleanup, in FIFO order, never
 * dropped; one `sync()` decides durability for all three (save point, settle,
 * fork), so the durability setting is honoured in one place. On an asynchronous
 * storage, `stored()` is what callers await before they broadcast or run a tool
 * (`undefined`, so no await and no promise, on memory and JSONL).
 */
import type { ConfigKey, HarnessEvent } from "../events/event-types.js";
import { shortId } from "../ids.js";
import type { EntryInput, JournalRecord, ThinkingLevel } from "../session/entries.js";
import type { Session } from "../session/session.js";
import type { Durability } from "./options.js";
import { PendingWrites } from "./pending-writes.js";

/** Ids of queued messages and pending writes: 64 random bits, so no two in one session collide. */
export const durableId = () => `${shortId()}${shortId()}`;

/** What the writer needs of the harness. */
export interface WriterPort {
  busy(): boolean;
  emit(event: HarnessEvent): Promise<void>;
}

export class SessionWriter {
  private readonly pending = new PendingWrites();

  constructor(
    readonly session: Session,
    private readonly durability: Durability,
    private readonly port: WriterPort,
  ) {}

  /** A write: at once when idle; when busy, journaled and pending until the next save point. */
  record(input: EntryInput): void {
    if (!this.port.busy()) {
      this.session.append(input);
      return;
    }
    const id = durableId();
    // Durable while pending; if the journal cannot be written, the flush reports the failure.
    this.journalQuietly({ event: "pending_write", pendingId: id, input });
    this.pending.add(input, id);
  }

  journal(record: JournalRecord): void {
    this.session.appendJournal(record);
  }

  /** A journal record whose loss only weakens recovery (it never blocks the caller). */
  journalQuietly(record: JournalRecord): void {
    try {
      this.session.appendJournal(record);
    } catch {
      // The session is failing; the next write that matters reports it.
    }
  }

  /** `undefined` when every write so far is stored; else the promise to await (see Session.whenStored). */
  stored(): Promise<void> | undefined {
    return this.session.whenStored();
  }

  get pendingWrites(): readonly EntryInput[] {
    return this.pending.list().map((write) => write.input);
  }

  /**
   * Flushes to stable storage as the durability setting says: `strict` always
   * waits; `save-point` waits at settle and fork but not at a save point; `group`
   * waits only at fork (the fsyncs of save points and settles run off the main thread
   * and coalesce); `none` leaves it to the OS (except `force`: fork copies the file,
   * which must be complete).
   */
  sync(when: "save-point" | "settle" | "force"): void {
    if (when === "force") this.session.sync();
    else if (this.durability !== "none") {
      const wait = this.durability === "strict" || (when === "settle" && this.durability === "save-point");
      this.session.sync({ wait });
    }
  }

  /** The save point after `turn_end` listeners: pending writes flush, then `save_point`. */
  async savePoint(): Promise<void> {
    const hadPendingWrites = this.pending.size > 0;
    const flushed = this.pending.flush(this.session);
    this.sync("save-point");
    const stored = this.stored();
    if (stored) await stored;
    await this.port.emit({ type: "save_point", hadPendingWrites, flushed });
  }

  /**
   * At settle: leftover writes flush, then `closing` (e.g. `run_end`) is journaled,
   * then sync. Returns a failure, or on an asynchronous storage with writes in flight
   * a promise of one (never rejecting).
   */
  settle(closing?: JournalRecord): unknown {
    try {
      this.pending.flush(this.session);
      if (closing) this.session.appendJournal(closing);
      this.sync("settle");
    } catch (error) {
      return error;
    }
    return this.stored()?.then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  /** At run start, commit live config the branch does not reflect yet (e.g. a model chosen at construction). */
  recordConfigDrift(config: {
    model: { provider: string; id: string };
    thinkingLevel: ThinkingLevel;
    activeToolNames: readonly string[];
  }): void {
    const branch = this.session.buildContext();
    const { model, thinkingLevel, activeToolNames: active } = config;
    if (branch.model?.provider !== model.provider || branch.model?.modelId !== model.id) {
      this.session.append({ type: "model_change", provider: model.provider, modelId: model.id });
    }
    if ((branch.thinkingLevel ?? "off") !== thinkingLevel) {
      this.session.append({ type: "thinking_level_change", thinkingLevel });
    }
    const recorded = branch.activeTools;
    if (!recorded || recorded.length !== active.length || recorded.some((name, i) => name !== active[i])) {
      this.session.append({ type: "active_tools_change", activeTools: [...active] });
    }
  }

  /** `config_change`; `pending` when the change waits for a save point. */
  configChanged(key: ConfigKey): void {
    void this.port.emit({ type: "config_change", key, pending: this.port.busy() });
  }
}
