/**
 * A session: the append-only tree of entries, the active leaf, and the projection of
 * the active branch into model context.
 *
 * Invariant: memory mirrors storage. An entry is validated, then written through
 * storage, and only then added to memory, so a failed write changes nothing. The
 * leaf is the last of (each tree entry's id, each leaf entry's target) in append
 * order, which is also how it is recomputed on load. The cached context is always the
 * projection of the current leaf's branch, or absent. Journal records (durable runs)
 * share the file and the id space but live apart: they are never in `entries()`, never
 * nodes, and never move the leaf or touch the context.
 *
 * With an asynchronous storage (its writes return promises) memory runs ahead of
 * storage by the writes in flight: `whenStored()` is what the harness awaits before
 * it broadcasts. Storage applies them in order; if one fails, the session is failed:
 * every later write throws and `whenStored()` rejects, and reopening it recovers from
 * what storage holds. A synchronous storage never leaves a write in flight.
 */
import {
  describeError,
  type HarnessError,
  invalidArgument,
  isHarnessError,
  sessionError,
} from "../errors.js";
import { shortId } from "../ids.js";
import { BranchContext } from "./context.js";
import type {
  AgentMessage,
  EntryInput,
  JournalEntry,
  JournalRecord,
  LabelEntry,
  LeafEntry,
  MessageEntry,
  SessionContext,
  SessionEntry,
  SessionHeader,
  StoredEntry,
} from "./entries.js";
import type { SessionStorage, StorageResult } from "./storage.js";
import { entryProblem } from "./validation.js";

export class Session {
  readonly header: SessionHeader;
  readonly storage: SessionStorage;
  /** Problems tolerated while loading (for example a dropped torn last line). */
  readonly warnings: string[];
  readonly #entries: SessionEntry[] = [];
  /** Entries and journal records by id (one id space); a validating storage's index if it gave one. */
  #byId = new Map<string, StoredEntry>();
  readonly #journal: JournalEntry[] = [];
  /** How many journal records of each event the session holds (so "any parks?" costs O(1)). */
  readonly #journalEvents = new Map<string, number>();
  /**
   * Tree children of each node (`null`: roots), in append order; leaf entries are not
   * nodes. Built on the first `children()` call, since a harness resuming a long
   * session never needs it and it would cost an array per entry at open.
   */
  #children: Map<string | null, SessionEntry[]> | undefined;
  readonly #labels = new Map<string, string>();
  readonly #lookup = (id: string): StoredEntry | undefined => this.#byId.get(id);
  #leafId: string | null = null;
  #name: string | undefined;
  #context: BranchContext | undefined;
  /** The last write still in flight on an asynchronous storage (it settles after all earlier ones). */
  #inFlight: Promise<void> | undefined;
  /** Set when an asynchronous write failed: the session takes no more writes. */
  #failure: unknown;

  private constructor(storage: SessionStorage, header: SessionHeader, warnings: string[]) {
    this.storage = storage;
    this.header = header;
    this.warnings = warnings;
  }

  /**
   * Loads a session from `storage` and takes ownership of it: if loading fails, the
   * storage is closed (releasing its lock) before the error propagates.
   */
  static open(storage: SessionStorage): Session {
    try {
      const loaded = storage.load();
      const session = new Session(storage, loaded.header, loaded.warnings);
      // Nothing is built twice: the index comes from a storage that validated, and the context
      // grows entry by entry (a compaction or leaf move leaves it to the first buildContext()).
      const indexed = loaded.validated === true && loaded.byId !== undefined;
      if (indexed) session.#byId = loaded.byId as Map<string, StoredEntry>;
      session.#context = BranchContext.build([]);
      const { entries } = loaded;
      for (let index = 0; index < entries.length; index++) {
        const entry = entries[index] as StoredEntry;
        // Storage may be any implementation: check the tree unless it says it did.
        const problem = loaded.validated ? undefined : entryProblem(entry, session.#lookup);
        if (problem !== undefined) {
          throw sessionError(`invalid session ${loaded.header.id} entry ${index + 1}: ${problem}`, {
            file: storage.path,
          });
        }
        if (entry.type === "journal") session.#admitJournal(entry, indexed);
        else session.#admit(entry, indexed);
      }
      return session;
    } catch (error) {
      storage.close();
      throw error;
    }
  }

  /** Starts a session on storage that holds only a header. */
  static create(storage: SessionStorage): Session {
    const session = Session.open(storage);
    if (session.#entries.length > 0) {
      storage.close();
      throw invalidArgument(`storage for session ${session.id} is not empty; use Session.open`);
    }
    return session;
  }

  get id(): string {
    return this.header.id;
  }

  /** The active leaf; `null` before the first entry (or after a move to the empty branch). */
  get leafId(): string | null {
    return this.#leafId;
  }

  /** The latest name set by a `session_info` entry. */
  get name(): string | undefined {
    return this.#name;
  }

  /** Every entry in append order. A read-only view of the live list, not a copy. */
  entries(): readonly SessionEntry[] {
    return this.#entries;
  }

  /** Every journal record (run, turn and tool-call boundaries, queue and pending-write records), in append order. */
  journal(): readonly JournalEntry[] {
    return this.#journal;
  }

  /** How many journal records with this `event` the session holds (`tool_park`, `run_start`, ...). */
  journalCount(event: string): number {
    return this.#journalEvents.get(event) ?? 0;
  }

  getEntry(id: string): SessionEntry | undefined {
    const entry = this.#byId.get(id);
    return entry?.type === "journal" ? undefined : entry;
  }

  /** Tree children of `id` (`null`: the roots), in append order. */
  children(id: string | null): SessionEntry[] {
    if (this.#children === undefined) {
      this.#children = new Map();
      for (const entry of this.#entries) this.#indexChild(entry);
    }
    return this.#children.get(id)?.slice() ?? [];
  }

  /** The tree entries from the root to `leafId`, inclusive. */
  branch(leafId: string | null = this.#leafId): SessionEntry[] {
    if (leafId === null) return [];
    this.#requireNode(leafId, "branch");
    const path: SessionEntry[] = [];
    for (let entry = this.#byId.get(leafId) as SessionEntry | undefined; entry !== undefined; ) {
      path.push(entry);
      entry = entry.parentId === null ? undefined : (this.#byId.get(entry.parentId) as SessionEntry);
    }
    return path.reverse();
  }

  labelOf(id: string): string | undefined {
    return this.#labels.get(id);
  }

  /** Appends a tree entry as a child of the leaf and moves the leaf to it. */
  append(input: EntryInput): SessionEntry {
    if (input.type === "leaf") throw invalidArgument("leaf entries are appended by moveLeaf(), not append()");
    if ((input as { type: string }).type === "journal") {
      throw invalidArgument("journal records are appended by appendJournal(), not append()");
    }
    return this.#commit(input);
  }

  /** Appends a message; `queueIds` names the queued messages it consumes (see `MessageEntry`). */
  appendMessage(message: AgentMessage, options: { queueIds?: readonly string[] } = {}): MessageEntry {
    const input: EntryInput = { type: "message", message };
    if (options.queueIds !== undefined && options.queueIds.length > 0) input.queueIds = [...options.queueIds];
    return this.#commit(input) as MessageEntry;
  }

  /**
   * Appends a journal record: one whole line, written at once (even while a run is
   * busy: the journal is not conversation history). It changes neither the tree, the
   * leaf nor the context.
   */
  appendJournal(record: JournalRecord): JournalEntry {
    this.#assertWritable();
    const entry = withFields(
      {
        type: "journal",
        id: this.#newId(),
        parentId: this.#leafId,
        timestamp: Date.now(),
        event: record.event,
      },
      record,
      JOURNAL_OWN_FIELDS,
    ) as unknown as JournalEntry;
    const problem = entryProblem(entry, this.#lookup);
    if (problem !== undefined) throw invalidArgument(`cannot append journal record: ${problem}`);
    this.#track(this.storage.append(entry));
    this.#admitJournal(entry);
    return entry;
  }

  /**
   * Appends several entries as one write: each a child of the one before (a `leaf`
   * input moves the leaf instead), all validated first, then persisted so that a crash
   * leaves all of them or none (a leaf move with its branch summary). Returns them in order.
   */
  appendAll(inputs: readonly EntryInput[]): SessionEntry[] {
    this.#assertWritable();
    const staged = new Map<string, SessionEntry>();
    const lookup = (id: string) => staged.get(id) ?? this.#lookup(id);
    const entries: SessionEntry[] = [];
    let leafId = this.#leafId;
    for (const input of inputs) {
      if ((input as { type: string }).type === "journal") {
        throw invalidArgument("journal records are appended by appendJournal(), not appendAll()");
      }
      const entry = this.#build(input, leafId, (id) => staged.has(id));
      const problem = entryProblem(entry, lookup);
      if (problem !== undefined) throw invalidArgument(`cannot append ${input.type} entry: ${problem}`);
      staged.set(entry.id, entry);
      entries.push(entry);
      leafId = entry.type === "leaf" ? entry.targetId : entry.id;
    }
    this.#track(this.storage.appendAll(entries));
    for (const entry of entries) this.#admit(entry);
    return entries;
  }

  /** Makes `targetId` the active leaf (`null`: the empty branch), persisting the move. */
  moveLeaf(targetId: string | null): LeafEntry {
    if (targetId !== null) this.#requireNode(targetId, "move the leaf to");
    return this.#commit({ type: "leaf", targetId }) as LeafEntry;
  }

  /** Sets (or with `null` removes) the label of `targetId`. */
  setLabel(targetId: string, label: string | null): LabelEntry {
    this.#requireNode(targetId, "label");
    return this.#commit({ type: "label", targetId, label }) as LabelEntry;
  }

  /**
   * The model context of the branch ending at `leafId`. For the active leaf this is
   * served from an incrementally maintained cache; other leaves are built fresh.
   */
  buildContext(leafId: string | null = this.#leafId): SessionContext {
    if (leafId !== this.#leafId) return BranchContext.build(this.branch(leafId)).snapshot();
    this.#context ??= BranchContext.build(this.branch(leafId));
    return this.#context.snapshot();
  }

  sync(options?: { wait?: boolean }): void {
    this.#track(this.storage.sync(options));
  }

  /**
   * `undefined` when every write made so far is stored (always, on a synchronous
   * storage); otherwise a promise that resolves when they are, or rejects with the
   * failure (code `session`) that failed the session.
   */
  whenStored(): Promise<void> | undefined {
    if (this.#failure !== undefined) return Promise.reject(this.#failed());
    return this.#inFlight;
  }

  /** Closes the storage; an asynchronous one first finishes its writes in flight. */
  close(): StorageResult {
    return this.storage.close();
  }

  /** Fast path: a synchronous storage returns `undefined` and costs nothing more. */
  #track(result: StorageResult): void {
    if (result === undefined) return;
    const write: Promise<void> = Promise.resolve(result).then(
      () => {
        if (this.#inFlight === write) this.#inFlight = undefined;
      },
      (error: unknown) => {
        this.#failure ??= error;
        throw this.#failed();
      },
    );
    write.catch(() => {}); // reported through whenStored() and the next write
    this.#inFlight = write;
  }

  #failed(): HarnessError {
    const failure = this.#failure;
    if (isHarnessError(failure)) return failure;
    return sessionError(
      `session ${this.id}: a write to ${this.storage.kind} storage failed: ${describeError(failure)}`,
      {
        file: this.storage.path,
        cause: failure,
      },
    );
  }

  #commit(input: EntryInput): SessionEntry {
    this.#assertWritable();
    const entry = this.#build(input, this.#leafId);
    const problem = entryProblem(entry, this.#lookup);
    if (problem !== undefined) throw invalidArgument(`cannot append ${input.type} entry: ${problem}`);
    this.#track(this.storage.append(entry));
    this.#admit(entry);
    return entry;
  }

  #build(input: EntryInput, parentId: string | null, taken?: (id: string) => boolean): SessionEntry {
    // An input that smuggles in an id or parentId (say, an entry copied from elsewhere) loses them.
    return withFields(
      { type: input.type, id: this.#newId(taken), parentId, timestamp: input.timestamp ?? Date.now() },
      input,
      ENTRY_OWN_FIELDS,
    ) as unknown as SessionEntry;
  }

  /** Adds a record that storage already holds (`indexed`: and `#byId` too). */
  #admitJournal(entry: JournalEntry, indexed = false): void {
    this.#journal.push(entry);
    this.#journalEvents.set(entry.event, (this.#journalEvents.get(entry.event) ?? 0) + 1);
    if (!indexed) this.#byId.set(entry.id, entry);
  }

  /** Adds an entry that storage already holds (`indexed`: and `#byId` too). */
  #admit(entry: SessionEntry, indexed = false): void {
    this.#entries.push(entry);
    if (!indexed) this.#byId.set(entry.id, entry);
    if (entry.type === "leaf") {
      this.#leafId = entry.targetId;
      if (this.#context?.leafId !== entry.targetId) this.#context = undefined;
      return;
    }
    if (this.#children !== undefined) this.#indexChild(entry);
    if (entry.type === "label") {
      if (entry.label === null) this.#labels.delete(entry.targetId);
      else this.#labels.set(entry.targetId, entry.label);
    } else if (entry.type === "session_info" && typeof entry.name === "string") {
      this.#name = entry.name;
    }
    if (
      this.#context !== undefined &&
      !(this.#context.leafId === entry.parentId && this.#context.extend(entry))
    ) {
      this.#context = undefined; // rebuilt once, on the next buildContext()
    }
    this.#leafId = entry.id;
  }

  #indexChild(entry: SessionEntry): void {
    if (entry.type === "leaf") return;
    const children = this.#children as Map<string | null, SessionEntry[]>;
    const siblings = children.get(entry.parentId);
    if (siblings === undefined) children.set(entry.parentId, [entry]);
    else siblings.push(entry);
  }

  #assertWritable(): void {
    if (this.#failure !== undefined) throw this.#failed();
  }

  #newId(taken?: (id: string) => boolean): string {
    // 8 hex chars: short enough to type, and re-rolled on the rare collision.
    for (;;) {
      const id = shortId();
      if (!this.#byId.has(id) && !taken?.(id)) return id;
    }
  }

  #requireNode(id: string, operation: string): void {
    const entry = this.#byId.get(id);
    if (entry === undefined || entry.type === "journal")
      throw invalidArgument(`cannot ${operation} entry "${id}": no such entry in session ${this.id}`);
    if (entry.type === "leaf") {
      throw invalidArgument(`cannot ${operation} entry "${id}": it is a leaf move, not a tree entry`);
    }
  }
}

/** The fields a session sets itself on every entry (an input's own values for them are dropped). */
const ENTRY_OWN_FIELDS = new Set(["type", "id", "parentId", "timestamp"]);
const JOURNAL_OWN_FIELDS = new Set(["type", "id", "parentId", "timestamp", "event"]);

/**
 * `head` followed by `source`'s own enumerable fields except `own`, in their order: what
 * `{ ...head, ...rest }` of a rest destructuring builds, without its two intermediate copies.
 */
function withFields(
  head: Record<string, unknown>,
  source: object,
  own: ReadonlySet<string>,
): Record<string, unknown> {
  const fields = source as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!own.has(key)) head[key] = fields[key];
  }
  return head;
}
