/**
 * Protected paths (invariant 4): write and edit refuse Rein's own state and
 * config, whatever spelling reaches them, because the check runs on the canonical
 * path relative to the working directory.
 */
import type { ProtectedFiles } from "@rein/sdk";
import picomatch from "picomatch";
import { type Target, ToolInputError } from "./paths.js";

export type ProtectedCheck = (target: Target, display: string) => void;

/** Refuses a target matching the globs (relative to the working directory) or a file the host protects. */
export function protectedCheck(globs: readonly string[], files?: ProtectedFiles): ProtectedCheck {
  const match = globs.length === 0 ? () => false : picomatch([...globs], { dot: true });
  return (target, display) => {
    const owner = files?.protectedBy(target.real);
    if (owner !== undefined) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${owner} loaded it: Rein's own config or plugin files); file tools do not write it`,
      );
    }
    const relative = target.relative;
    if (relative === ".." || relative.startsWith("../")) return;
    if (match(relative)) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${relative} holds Rein's own state or config); file tools do not write it`,
      );
    }
  };
}
