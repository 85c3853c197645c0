/**
 * Terminal output rules: colour only on a TTY and never with NO_COLOR (or with
 * FORCE_COLOR forcing it); stdout carries the answer (or JSON lines), stderr
 * carries activity, spinners and errors.
 */
import pc from "picocolors";

export type Colors = ReturnType<typeof pc.createColors>;

export function colorsFor(stream: NodeJS.WriteStream): Colors {
  const env = process.env;
  const enabled =
    env.NO_COLOR === undefined &&
    (env.FORCE_COLOR !== undefined ? env.FORCE_COLOR !== "0" : stream.isTTY === true);
  return pc.createColors(enabled);
}

export interface Terminal {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  /** Colours for stderr (activity, errors). */
  c: Colors;
  /** Colours for stdout (answers). */
  co: Colors;
  /** Whether stderr is an interactive terminal (spinners are drawn only then). */
  interactive: boolean;
}

export function terminal(): Terminal {
  return {
    out: process.stdout,
    err: process.stderr,
    c: colorsFor(process.stderr),
    co: colorsFor(process.stdout),
    interactive:
      process.stderr.isTTY === true && process.env.NO_COLOR === undefined && process.env.CI === undefined,
  };
}

/** Shortens a value to one line of at most `max` characters. */
export function shorten(value: unknown, max = 80): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
