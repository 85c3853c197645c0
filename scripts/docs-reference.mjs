// Generates docs/reference/<package> from each public package's types (TypeDoc, Markdown output).
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";

const packages = [
  ["harness", "packages/harness"],
  ["sdk", "packages/sdk"],
  ["cli", "packages/cli"],
];
for (const [name, dir] of packages) {
  const out = `docs/reference/${name}`;
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    "npx",
    [
      "typedoc",
      "--plugin",
      "typedoc-plugin-markdown",
      "--tsconfig",
      `${dir}/tsconfig.json`,
      "--entryPoints",
      `${dir}/src/index.ts`,
      ...(name === "sdk" ? ["--entryPoints", `${dir}/src/testing/index.ts`] : []),
      "--out",
      out,
      "--readme",
      "none",
      "--excludePrivate",
      "--excludeExternals",
      "--hideGenerator",
      "--disableSources",
      "--logLevel",
      "Warn",
    ],
    { stdio: "inherit" },
  );
}
