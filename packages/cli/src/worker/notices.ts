/**
 * The event stream of a request back to whoever follows its session: LISTEN/NOTIFY
 * on the queue's database, one channel per session (a follower hears only its own).
 *
 * Invariant: a follower gets every notice whole, in order, whatever its size.
 * PostgreSQL refuses a NOTIFY payload of 8000 bytes or more, so a larger notice is
 * stored in `rein_queue.notice` and only its row id is notified (by reference);
 * the follower reads the row before it hands on anything after it. Rows older than
 * an hour are deleted by the workers that write them (a follower that is an hour
 * late has lost the stream anyway: NOTIFY itself is not replayed).
 */
import { createHash } from "node:crypto";
import pg from "pg";

/** What a follower receives: an event of a request's run, or the request's end. */
export type QueueNotice =
  | { requestId: string; sessionId: string; kind: "event"; event: { type: string; [key: string]: unknown } }
  | { requestId: string; sessionId: string; kind: "end"; status: string; reason?: string };

/** NOTIFY's limit is 8000 bytes; a payload at most this long goes inline. */
export const MAX_INLINE_PAYLOAD = 7_500;

/** The table of notices sent by reference, in the queue's schema (QUEUE_SCHEMA). */
const TABLE = "rein_queue.notice";

/** How often (at most) a publisher deletes notices past their hour. */
const PRUNE_EVERY_MS = 60_000;
let prunedAt = 0;

/** Creates the table of large notices (a worker does, before it takes jobs). */
export async function installNotices(db: pg.Pool | pg.ClientBase): Promise<void> {
  try {
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), payload text NOT NULL)`,
    );
  } catch (error) {
    // Two workers starting together: IF NOT EXISTS does not stop the loser's catalog insert
    // (the table's name: 42P07; its row type: 42710 "type already exists"; the catalog's index: 23505).
    const code = (error as { code?: string }).code;
    if (code !== "42P07" && code !== "42710" && code !== "23505") throw error;
  }
}

/** The NOTIFY channel of a session: a hash, since channel names are identifiers of at most 63 bytes. */
export function sessionChannel(sessionId: string): string {
  return `rein_s_${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}`;
}

/**
 * Publishes notices on their sessions' channels, in order, in one round trip (a
 * follower may not be listening: nobody waits for one). A large one is stored first
 * and notified by reference.
 */
export async function publish(db: pg.Pool | pg.ClientBase, notices: readonly QueueNotice[]): Promise<void> {
  if (notices.length === 0) return;
  const values: string[] = [];
  for (const notice of notices) {
    let payload = JSON.stringify(notice);
    if (Buffer.byteLength(payload) > MAX_INLINE_PAYLOAD) {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO ${TABLE} (payload) VALUES ($1) RETURNING id`,
        [payload],
      );
      payload = JSON.stringify({ ref: rows[0]?.id });
      if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        await db.query(`DELETE FROM ${TABLE} WHERE created_at < now() - interval '1 hour'`);
      }
    }
    values.push(sessionChannel(notice.sessionId), payload);
  }
  // pg_notify calls of one statement are delivered in their order.
  const calls = notices.map((_, i) => `pg_notify($${2 * i + 1}, $${2 * i + 2})`).join(", ");
  await db.query(`SELECT ${calls}`, values);
}

/** The most notices in one NOTIFY statement (two parameters each, far below PostgreSQL's 65535). */
const MAX_BATCH = 500;

/**
 * Sends notices as they come, coalescing those that arrive while a send is under way
 * into the next one (a run's events are many and small). `flushed()` resolves once
 * everything sent so far is out (or failed: notices are best effort).
 */
export function noticeStream(db: pg.Pool | pg.ClientBase): {
  send(notice: QueueNotice): void;
  flushed(): Promise<void>;
} {
  const shared = sharedStream(db);
  let last = 0;
  return {
    send(notice) {
      last = shared.send(notice);
    },
    flushed: () => shared.through(last),
  };
}

interface SharedStream {
  /** Queues a notice; returns its number in the stream. */
  send(notice: QueueNotice): number;
  /** Resolves once notices up to number `n` are out (or failed). */
  through(n: number): Promise<void>;
}

/**
 * One stream per database for the whole process: the notices of all runs in flight
 * (a worker holds hundreds) go out together, a NOTIFY round trip per batch rather than
 * per run. Order is kept: one drain, in the order sent (so each session's in its order).
 */
const streams = new WeakMap<object, SharedStream>();

function sharedStream(db: pg.Pool | pg.ClientBase): SharedStream {
  const known = streams.get(db);
  if (known) return known;
  let pending: QueueNotice[] = [];
  let queued = 0;
  let sent = 0;
  let running = false;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const release = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i] as { n: number; resolve: () => void };
      if (waiter.n <= sent) {
        waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  };
  const drain = async () => {
    while (pending.length > 0) {
      const batch = pending.slice(0, MAX_BATCH);
      pending = pending.slice(batch.length);
      await publish(db, batch).catch(() => undefined);
      sent += batch.length;
      release();
    }
    running = false;
  };
  const stream: SharedStream = {
    send(notice) {
      pending.push(notice);
      queued++;
      // From the next turn of the loop: the notices of every run that sends meanwhile go in one statement.
      if (!running) {
        running = true;
        setImmediate(() => void drain());
      }
      return queued;
    },
    through(n) {
      if (n <= sent) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
  streams.set(db, stream);
  return stream;
}

/**
 * Listens to a session's notices until `stop()`; `onNotice` gets each one, whole and in
 * order. Resolves once LISTEN is in place, so a prompt submitted afterwards loses nothing.
 */
export async function followSession(
  url: string,
  sessionId: string,
  onNotice: (notice: QueueNotice) => void,
  /** The connection was lost before `stop()` (a database restart): no more notices will come. */
  onLost?: (error: Error) => void,
): Promise<{ stop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  let stopped = false;
  let lostWith: Error | undefined;
  // A server gone mid-follow ends the stream, not the process.
  client.on("error", (error) => {
    lostWith ??= error;
  });
  client.on("end", () => {
    if (!stopped) onLost?.(lostWith ?? new Error("the server closed the connection"));
  });
  await client.connect();
  const channel = sessionChannel(sessionId);
  // Notices by reference are read in turn: one after a large one waits for it.
  let order = Promise.resolve();
  client.on("notification", (message) => {
    if (message.channel !== channel || message.payload === undefined) return;
    const payload = message.payload;
    order = order.then(async () => {
      try {
        const parsed = JSON.parse(payload) as QueueNotice | { ref?: unknown };
        if (!("kind" in parsed)) {
          if (typeof parsed.ref !== "string") return;
          const { rows } = await client.query<{ payload: string }>(
            `SELECT payload FROM ${TABLE} WHERE id = $1`,
            [parsed.ref],
          );
          if (rows[0]) onNotice(JSON.parse(rows[0].payload) as QueueNotice);
        } else onNotice(parsed);
      } catch {
        // not ours, or its row is gone
      }
    });
  });
  await client.query(`LISTEN ${channel}`);
  return {
    async stop() {
      stopped = true;
      await order;
      await client.end().catch(() => undefined);
    },
  };
}
