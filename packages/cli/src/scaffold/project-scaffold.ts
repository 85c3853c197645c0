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

/** What `npm init` writes as the test script: it always fails, so it is replaced, not kept. */
const NPM_INIT_TEST = /^echo "Error: no test specified" && exit 1$/;
const TEST = "vitest run";

/**
 * The test script: npm's failing placeholder is replaced; a script that does not
 * run vitest already gets it appended, so `npm test` runs the plugin's test too.
 */
function testScript(existing: string | undefined): string {
  if (existing === undefined || existing.trim() === "" || NPM_INIT_TEST.test(existing.trim())) return TEST;
  if (/\bvitest\b/.test(existing)) return existing;
  return `${existing} && ${TEST}`;
}

type Dependencies = Record<string, string>;

/** package.json for the project: `existing` (its text, if any) with what `rein init` needs added. */
export function projectPackageJson(
  existing: string | undefined,
  folderName: string,
  reinVersion: string,
  specOf: (name: string) => string = () => `^${reinVersion}`,
): string {
  const base = existing ? (JSON.parse(existing) as Record<string, unknown>) : {};
  const merged: Record<string, unknown> = {
    name: folderName.toLowerCase().replace(/[^a-z0-9._-]+/g, "-") || "rein-project",
    private: true,
    ...base,
  };
  merged.type ??= "module";
  const scripts = { ...(base.scripts as Record<string, string> | undefined) };
  scripts.test = testScript(scripts.test);
  scripts.typecheck ??= "tsc";
  scripts.agent ??= "rein run";
  merged.scripts = scripts;
  const wanted: Dependencies = {
    "@rein/cli": specOf("@rein/cli"),
    "@rein/sdk": specOf("@rein/sdk"),
    // The scaffolded config asks through @rein/plugin-permissions and runs bash in @rein/tools-shell's sandbox.
    "@rein/plugin-permissions": specOf("@rein/plugin-permissions"),
    "@rein/tools-shell": specOf("@rein/tools-shell"),
    "@types/node": "^24.0.0",
    typescript: "~5.9.3",
    vitest: "^5.1.2",
  };
  // A package already listed anywhere keeps its entry: listing it twice (say in
  // dependencies and devDependencies) makes the next npm install fail with ERESOLVE.
  const listed = new Set(
    ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"].flatMap((field) =>
      Object.keys((base[field] as Dependencies | undefined) ?? {}),
    ),
  );
  const dev: Dependencies = { ...(base.devDependencies as Dependencies | undefined) };
  for (const [name, spec] of Object.entries(wanted)) if (!listed.has(name)) dev[name] = spec;
  merged.devDependencies = dev;
  return json(merged);
}
