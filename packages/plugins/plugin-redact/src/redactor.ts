/**
 * The redactor: replaces secrets in text with `[redacted:<name>]`.
 *
 * Order: exact values first (environment variables and configured values, longest
 * first, so the label names the variable), then patterns in the order given
 * (built-ins before configured ones). Invariant: redaction never grows a secret
 * back - every replacement is a fixed marker that no pattern matches.
 *
 * Most text holds no secret, and it is redacted on every tool result (and every
 * quoted reason), so one scan screens it first: the union of the values and every
 * pattern that can be joined. Text nothing matches is returned as it is, which is
 * what the passes below would return for it; anything else takes those passes.
 */

export interface SecretPattern {
  /** The label in the marker: `[redacted:<name>]`. */
  name: string;
  regex: RegExp;
}

/** API-key and credential shapes found in the wild. */
export const BUILTIN_PATTERNS: readonly SecretPattern[] = [
  {
    name: "private-key",
    regex:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { name: "anthropic-key", regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { name: "openai-key", regex: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { name: "github-token", regex: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { name: "aws-access-key", regex: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: "slack-token", regex: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: "jwt", regex: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
];

/** Names of environment variables whose values are treated as secrets. */
export const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

export interface RedactorConfig {
  patterns: readonly SecretPattern[];
  /** Exact values to mask, with their labels. */
  values: readonly { name: string; value: string }[];
}

export interface Redactor {
  /** The text with secrets masked, and how many were masked. */
  redact(text: string): { text: string; count: number };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function createRedactor(config: RedactorConfig): Redactor {
  // Longest first: a value containing another is masked whole.
  const values = [...config.values]
    .filter((v) => v.value.length > 0)
    .sort((a, b) => b.value.length - a.value.length);
  const valueRegex =
    values.length > 0 ? new RegExp(values.map((v) => escapeRegExp(v.value)).join("|"), "g") : undefined;
  const labelOf = new Map(values.map((v) => [v.value, v.name]));
  const patterns = config.patterns.map((p) => ({
    name: p.name,
    regex: p.regex.global ? p.regex : new RegExp(p.regex.source, `${p.regex.flags}g`),
  }));
  const screen = screenFor(valueRegex, patterns);
  return {
    redact(text) {
      if (!screen(text)) return { text, count: 0 };
      let count = 0;
      let out = text;
      if (valueRegex) {
        out = out.replace(valueRegex, (match) => {
          count++;
          return `[redacted:${labelOf.get(match) ?? "secret"}]`;
        });
      }
      for (const { name, regex } of patterns) {
        regex.lastIndex = 0;
        out = out.replace(regex, () => {
          count++;
          return `[redacted:${name}]`;
        });
      }
      return { text: out, count };
    },
  };
}

/**
 * A source that keeps its meaning inside an alternation: no backreference (by number
 * or name) and no named group, whose numbering or names a union would change.
 */
const joinable = (regex: RegExp) => regex.flags === "g" && !/\\[1-9]|\\k<|\(\?<(?![=!])/.test(regex.source);

/**
 * Whether any value or pattern matches somewhere in a text: one scan for the joinable
 * ones (an alternation matches where any of its members does), then the others alone.
 */
function screenFor(
  valueRegex: RegExp | undefined,
  patterns: readonly { regex: RegExp }[],
): (text: string) => boolean {
  const all = [...(valueRegex ? [valueRegex] : []), ...patterns.map((p) => p.regex)];
  const joined = all.filter(joinable);
  const union = joined.length > 0 ? new RegExp(joined.map((r) => `(?:${r.source})`).join("|")) : undefined;
  const alone = all.filter((regex) => !joined.includes(regex));
  return (text) => {
    if (union?.test(text)) return true;
    for (const regex of alone) {
      regex.lastIndex = 0;
      if (regex.test(text)) return true;
    }
    return false;
  };
}

/** Values of environment variables that look secret (name matches, value longer than `minLength`), plus `names`. */
export function secretEnvValues(
  env: Readonly<Record<string, string | undefined>>,
  options: { names: readonly string[]; minLength: number; byName: boolean },
): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length <= options.minLength) continue;
    if (options.names.includes(name) || (options.byName && SECRET_ENV_NAME.test(name))) {
      out.push({ name: `env:${name}`, value });
    }
  }
  return out;
}

/**
 * Applies `redact` to every string in a value (objects and arrays copied, not
 * mutated; cycles kept as cycles). Returns the same value when nothing changed.
 */
export function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  const seen = new Map<object, unknown>();
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redact(v);
    if (v === null || typeof v !== "object") return v;
    if (seen.has(v)) return seen.get(v);
    if (Array.isArray(v)) {
      const copy: unknown[] = [];
      seen.set(v, copy);
      let changed = false;
      for (const item of v) {
        const next = walk(item);
        if (next !== item) changed = true;
        copy.push(next);
      }
      if (!changed) seen.set(v, v);
      return changed ? copy : v;
    }
    const prototype = Object.getPrototypeOf(v);
    if (prototype !== Object.prototype && prototype !== null) return v; // class instances (Buffers, Dates) as they are
    const copy: Record<string, unknown> = {};
    seen.set(v, copy);
    let changed = false;
    for (const [key, item] of Object.entries(v)) {
      const next = walk(item);
      if (next !== item) changed = true;
      copy[key] = next;
    }
    if (!changed) seen.set(v, v);
    return changed ? copy : v;
  };
  return walk(value);
}
