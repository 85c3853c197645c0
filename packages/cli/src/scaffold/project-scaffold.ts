/**
 * The project files `rein init` adds around the config and example plugin so the
 * folder typechecks and tests as written: a tsconfig (typecheck only; Rein loads
 * TypeScript itself, so `.ts` import extensions are allowed) and package.json
 * fields. Invariant: an existing package.json is merged, never replaced: only
 * fields it lacks are added.
 */

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const PROJECT_TSCONFIG = json({
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    types: ["node"],
  },
  include: ["rein.config.ts", "plugins"],
});

/** package.json for the project: `existing` (its text, if any) with what `rein init` needs added. */
export function projectPackageJson(
  existing: string | undefined,
  folderName: string,
  reinVersion: string,
): string {
  const base = existing ? (JSON.parse(existing) as Record<string, unknown>) : {};
  const merged: Record<string, unknown> = {
    name: folderName.toLowerCase().replace(/[^a-z0-9._-]+/g, "-") || "rein-project",
    private: true,
    ...base,
  };
  merged.type ??= "module";
  const scripts = { ...(base.scripts as Record<string, string> | undefined) };
  scripts.test ??= "vitest run";
  scripts.typecheck ??= "tsc";
  scripts.agent ??= "rein run";
  merged.scripts = scripts;
  merged.devDependencies = {
    "@rein/cli": `^${reinVersion}`,
    "@rein/sdk": `^${reinVersion}`,
    // The scaffolded config runs bash in @rein/tools-shell's sandbox.
    "@rein/tools-shell": `^${reinVersion}`,
    "@types/node": "^24.0.0",
    typescript: "~5.9.3",
    vitest: "^5.1.2",
    ...(base.devDependencies as Record<string, string> | undefined),
  };
  return json(merged);
}
