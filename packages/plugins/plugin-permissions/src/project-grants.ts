/**
 * Project grants: "always allow this in this project", kept in the project's
 * local config layer (the CLI passes `.rein/local.json` as `grantsFile`) and
 * read back through this plugin's `projectGrants` option.
 *
 * Invariants:
 * - a project grant is signed like a session grant, but bound to the grants
 *   file's absolute path instead of a session id: one copied into another
 *   project, edited, or written by anything but Rein is ignored and reported;
 * - the file is a Rein config layer in JSON: the grant is added to this plugin's
 *   entry (`["@rein/plugin-permissions", { projectGrants: [...] }]`), every other
 *   entry and key is kept as it was; a file that is not such JSON is never
 *   overwritten (the grant is refused, the answer still allows this call);
 * - the file is replaced atomically (write a temporary file, then rename).
 */
import fs from "node:fs";
import path from "node:path";
import { isGrant, type PermissionGrant, verify } from "./grants.js";

/** The specifier the grants file names this plugin by. */
export const PACKAGE_NAME = "@rein/plugin-permissions";

/** What a project grant's signature is bound to. */
export const projectBinding = (file: string) => `project:${path.resolve(file)}`;

export interface StoredProjectGrant {
  index: number;
  grant: PermissionGrant | undefined;
  problem?: string;
}

/** The `projectGrants` option, checked against the grant key and the grants file. */
export function projectGrantsFrom(
  list: readonly unknown[],
  key: Buffer,
  file: string | undefined,
): StoredProjectGrant[] {
  return list.map((data, index) => {
    if (!isGrant(data)) return { index, grant: undefined, problem: "it is malformed" };
    if (file === undefined) return { index, grant: undefined, problem: "no grantsFile is set to bind it to" };
    if (!verify(key, data, projectBinding(file))) {
      return {
        index,
        grant: undefined,
        problem: `its signature is missing or wrong (not written by Rein for ${file})`,
      };
    }
    return { index, grant: data };
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Adds a signed grant to the grants file (a JSON config layer). Throws with the reason when it cannot. */
export function saveProjectGrant(file: string, grant: PermissionGrant): void {
  let layer: Record<string, unknown> = {};
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, "utf8");
    let parsed: unknown;
    try {
      parsed = text.trim() === "" ? {} : JSON.parse(text);
    } catch (error) {
      throw new Error(`${file} is not valid JSON (${(error as Error).message}); it was left as it is`);
    }
    if (!isObject(parsed)) throw new Error(`${file} does not hold a config object; it was left as it is`);
    layer = parsed;
  }
  const plugins = layer.plugins ?? [];
  if (!Array.isArray(plugins)) throw new Error(`${file}: "plugins" is not an array; it was left as it is`);
  let entry = plugins.find(
    (item): item is [string, Record<string, unknown>] =>
      Array.isArray(item) && item[0] === PACKAGE_NAME && (item[1] === undefined || isObject(item[1])),
  );
  if (!entry) {
    entry = [PACKAGE_NAME, {}];
    plugins.push(entry);
  }
  const options = entry[1] ?? {};
  entry[1] = options;
  const grants = options.projectGrants ?? [];
  if (!Array.isArray(grants))
    throw new Error(`${file}: "projectGrants" is not an array; it was left as it is`);
  grants.push(grant);
  options.projectGrants = grants;
  layer.plugins = plugins;

  fs.mkdirSync(path.dirname(file), { recursive: true });
  const scratch = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(scratch, `${JSON.stringify(layer, null, 2)}\n`);
  fs.renameSync(scratch, file);
}
