/**
 * @rein/tools-task's errors: a task config that would loosen a parent's reins is
 * refused when the plugin loads, as an `SdkError` `invalid_options` naming the
 * plugin and the option path at fault (`/agents/<name>/...`).
 */
import { SdkError } from "@rein/sdk";

export const TaskErrorCode = {
  /** A child agent's config tries to loosen what its parent decides. */
  loosening: "invalid_options",
} as const;

/** A task option that would loosen a parent decision. */
export function looseningRefused(plugin: string, path: string, message: string): SdkError {
  return new SdkError(
    TaskErrorCode.loosening,
    `plugin "${plugin}": option ${path}: ${message} (a child's reins only tighten)`,
    { plugin, path },
  );
}
