-- Sessions, their entries and journal records (one row each, in append order).
-- `body` is the entry's JSON text exactly as a JSONL line holds it, so export and
-- import between JSONL and PostgreSQL are lossless; `type` and `entry_id` are
-- copies for queries.
CREATE TABLE rein_sessions (
  id text PRIMARY KEY,
  header text NOT NULL,
  created_at bigint NOT NULL,
  modified_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rein_entries (
  session_id text NOT NULL REFERENCES rein_sessions (id) ON DELETE CASCADE,
  -- 1, 2, 3, ... per session: the append order. The primary key also fences a
  -- writer that lost its lock: its next row collides instead of interleaving.
  seq bigint NOT NULL,
  entry_id text NOT NULL,
  type text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE INDEX rein_sessions_modified ON rein_sessions (modified_at DESC);
