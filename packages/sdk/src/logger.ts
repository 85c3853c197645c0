/**
 * A logger scoped to one plugin. Invariant: every record names its plugin, and
 * where records go is the host's choice (an injectable sink), so a plugin never
 * writes to stdout behind the CLI's back (stdout carries the answer or `--json`).
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface LogRecord {
  level: LogLevel;
  plugin: string;
  message: string;
  /** Extra values passed after the message. */
  args: unknown[];
}

/** Where log records go. */
export type LogSink = (record: LogRecord) => void;

export interface PluginLogger {
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
}

/**
 * The default sink: stderr, prefixed `[plugin]`; `debug` only when `REIN_DEBUG` is set.
 * Why stderr: stdout is the agent's answer (or one JSON event per line).
 */
export const stderrSink: LogSink = (record) => {
  if (record.level === "debug" && !process.env.REIN_DEBUG) return;
  console.error(`[${record.plugin}] ${record.level}: ${record.message}`, ...record.args);
};

export function createPluginLogger(plugin: string, sink: LogSink): PluginLogger {
  const log =
    (level: LogLevel) =>
    (message: string, ...args: unknown[]) => {
      try {
        sink({ level, plugin, message: String(message), args });
      } catch {
        // A broken sink must not turn a log line into a plugin failure.
      }
    };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
