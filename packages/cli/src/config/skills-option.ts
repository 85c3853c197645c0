/** The config's `skills` option: `{ enabled?, claude?, paths?, budgetTokens? }` (see packages/cli/README.md). */
type Fail = (option: string, expected: string, value: unknown, key?: string) => never;

const KEYS = ["enabled", "claude", "paths", "budgetTokens"];

export function checkSkillsOption(skills: unknown, fail: Fail): void {
  if (skills === undefined) return;
  if (typeof skills !== "object" || skills === null || Array.isArray(skills))
    fail("skills", "{ enabled?, claude?, paths?, budgetTokens? }", skills);
  const options = skills as Record<string, unknown>;
  const extra = Object.keys(options).find((key) => !KEYS.includes(key));
  if (extra !== undefined)
    fail(`skills.${extra}`, `absent (the options are ${KEYS.join(", ")})`, extra, extra);
  for (const key of ["enabled", "claude"]) {
    if (options[key] !== undefined && typeof options[key] !== "boolean")
      fail(`skills.${key}`, "a boolean", options[key], key);
  }
  const { paths, budgetTokens } = options;
  if (paths !== undefined && !(Array.isArray(paths) && paths.every((p) => typeof p === "string" && p !== "")))
    fail("skills.paths", "an array of folder paths (strings)", paths, "paths");
  if (budgetTokens !== undefined && !(Number.isInteger(budgetTokens) && (budgetTokens as number) >= 0))
    fail("skills.budgetTokens", "a non-negative integer", budgetTokens, "budgetTokens");
}
