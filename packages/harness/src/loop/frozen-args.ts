/**
 * Tool-call arguments are decided on frozen values: once validated, the object
 * that `toolCall`, `toolGate`, `permissionAsk` and `toolResult` taps see is
 * deeply frozen, so no tap can change the arguments in place after validation
 * (a change must be a rewrite, which is validated again). The tool itself gets
 * a mutable copy of the decided arguments.
 */
import { validateToolArguments } from "@mariozechner/pi-ai";

/** Freezes `value` and every object and array inside it, in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** A mutable deep copy of decided arguments, for the tool to use as it likes. */
export const toolArgs = (args: Record<string, unknown>): Record<string, unknown> => structuredClone(args);

/** A call's arguments validated (and coerced) against the tool's schema, frozen; throws when they do not match. */
export const validatedArgs = (
  tool: Parameters<typeof validateToolArguments>[0],
  call: Parameters<typeof validateToolArguments>[1],
): Record<string, unknown> => deepFreeze(validateToolArguments(tool, call));
