/**
 * Protected paths (invariant 4): write and edit refuse Rein's own state and
 * config, whatever spelling reaches them, because the check runs on the canonical
 * path relative to the working directory.
 */
import picomatch from "picomatch";
import { ToolInputError } from "./paths.js";

export type ProtectedCheck = (relative: string, display: string) => void;

export function protectedCheck(globs: readonly string[]): ProtectedCheck {
  const match = globs.length === 0 ? () => false : picomatch([...globs], { dot: true });
  return (relative, display) => {
    if (relative === ".." || relative.startsWith("../")) return;
    if (match(relative)) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${relative} holds Rein's own state or config); file tools do not write it`,
      );
    }
  };
}
