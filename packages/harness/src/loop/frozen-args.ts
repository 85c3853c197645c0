/**
 * Tool-call arguments are decided on frozen values: once validated, the object
 * that `toolCall`, `toolGate`, `permissionAsk` and `toolResult` taps see is
 * deeply frozen, so no tap can change the arguments in place after validation
 * (a change must be a rewrite, which is validated again). The tool itself gets
 * a mutable copy of the decided arguments.
 */
import { validateToolArguments } from "@earendil-works/pi-ai";

/** Freezes `value` and every object and array inside it, in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/**
 * A mutable deep copy of decided arguments, for the tool to use as it likes.
 * Arguments are JSON values (they came from the model and passed the schema), so a
 * plain recursive copy does; it is several times cheaper than `structuredClone` on the
 * small objects of a tool call, which runs on every call.
 */
export const toolArgs = (args: Record<string, unknown>): Record<string, unknown> =>
  copyJson(args) as Record<string, unknown>;

function copyJson(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const proto = Object.getPrototypeOf(value);
  // Anything but a plain object (a Date a tap put there, say): the general algorithm.
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyJson((value as Record<string, unknown>)[key]);
  return copy;
}

/** A call's arguments validated (and coerced) against the tool's schema, frozen; throws when they do not match. */
export const validatedArgs = (
  tool: Parameters<typeof validateToolArguments>[0],
  call: Parameters<typeof validateToolArguments>[1],
): Record<string, unknown> => deepFreeze(validateToolArguments(tool, call));
