/**
 * Arguments of a template or skill invocation: `$1`..`$9` are the positional
 * arguments (empty when missing), `$ARGUMENTS` and `$@` all of them joined by
 * spaces. A body with no placeholder gets the arguments appended on a line of
 * their own, so they are never silently dropped.
 */
const PLACEHOLDER = /\$(ARGUMENTS|@|\d+)/g;
const HAS_PLACEHOLDER = /\$(ARGUMENTS|@|\d+)/;

export type InvocationArgs = string | readonly string[];

/** Splits a line of arguments: whitespace-separated, '…' and "…" keep spaces. */
export function splitArguments(text: string): string[] {
  const args: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    args.push(match[1] ?? match[2] ?? match[3] ?? "");
  }
  return args;
}

export function argumentList(args: InvocationArgs | undefined): string[] {
  if (args === undefined) return [];
  return typeof args === "string" ? splitArguments(args) : [...args];
}

export function expandArguments(body: string, args: readonly string[]): string {
  const all = args.join(" ");
  if (!HAS_PLACEHOLDER.test(body)) return all === "" ? body : `${body}\n\n${all}`;
  return body.replace(PLACEHOLDER, (_match, key: string) =>
    key === "ARGUMENTS" || key === "@" ? all : (args[Number(key) - 1] ?? ""),
  );
}
