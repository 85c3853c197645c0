/**
 * pg-boss loads when a queue is opened, not with `@rein/cli`: a fresh Node process (the
 * built `dist/`, as embedders load it) records every module it resolves.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const INDEX = fileURLToPath(new URL("../dist/index.js", import.meta.url));

const SCRIPT = `
import { registerHooks } from "node:module";
const resolved = [];
registerHooks({ resolve(specifier, context, next) { resolved.push(specifier); return next(specifier, context); } });
const seen = () => resolved.includes("pg-boss");
const cli = await import(process.env.INDEX);
const before = seen();
// Nothing listens on port 1: pg-boss loads, then its start fails.
const error = await cli.openQueue("postgres://rein@127.0.0.1:1/none", { role: "client" }).then(() => undefined, (e) => e.message);
process.stdout.write(JSON.stringify({ before, after: seen(), error }));
`;

it("importing @rein/cli does not load pg-boss; opening a queue does", () => {
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT], {
    env: { ...process.env, INDEX },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(child.status, child.stderr).toBe(0);
  const seen = JSON.parse(child.stdout) as { before: boolean; after: boolean; error?: string };
  expect(seen.before).toBe(false);
  expect(seen.after).toBe(true);
  expect(seen.error).toMatch(/ECONNREFUSED|connect/);
});
