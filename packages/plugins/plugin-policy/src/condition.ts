/**
 * Rule conditions over a call's facts: `when: { sandbox: "workspace-write" }` makes a
 * rule count only for calls that run inside that OS boundary (`facts.sandbox` from
 * `@rein/tools-shell`).
 *
 * Invariant: a call's boundary is `off` unless its facts prove otherwise - no
 * `facts.sandbox`, or a call asking to run unsandboxed, is `off` - so an allow that
 * needs the sandbox never covers a call that could leave it.
 */
import { type Static, Type } from "@rein/sdk";

export const BOUNDARIES = ["off", "workspace-write", "read-only", "sandboxed"] as const;
export type Boundary = (typeof BOUNDARIES)[number];

// Spelled out (not BOUNDARIES.map) so the static type is the literal union.
const BoundarySchema = Type.Union([
  Type.Literal("off"),
  Type.Literal("workspace-write"),
  Type.Literal("read-only"),
  Type.Literal("sandboxed"),
]);

export const WhenSchema = Type.Object(
  {
    /** The OS boundary the call runs in; `sandboxed` is any mode but `off`. One or a list. */
    sandbox: Type.Optional(Type.Union([BoundarySchema, Type.Array(BoundarySchema, { minItems: 1 })])),
  },
  { additionalProperties: false },
);
export type When = Static<typeof WhenSchema>;

/** The boundary a call's facts prove: its sandbox mode, or `off`. */
export function boundaryOf(facts: object | undefined): Exclude<Boundary, "sandboxed"> {
  const sandbox = (facts as { sandbox?: { mode?: unknown; unsandboxedRequested?: unknown } } | undefined)
    ?.sandbox;
  if (sandbox === undefined || sandbox.unsandboxedRequested !== false) return "off";
  return sandbox.mode === "workspace-write" || sandbox.mode === "read-only" ? sandbox.mode : "off";
}

/** Whether `when` holds for a call with these facts (no condition always holds). */
export function whenHolds(when: When | undefined, facts: object | undefined): boolean {
  if (when?.sandbox === undefined) return true;
  const wanted: readonly Boundary[] = typeof when.sandbox === "string" ? [when.sandbox] : when.sandbox;
  const actual = boundaryOf(facts);
  return wanted.includes(actual) || (actual !== "off" && wanted.includes("sandboxed"));
}

/** Describes the condition for reasons: ` when sandbox is workspace-write`. */
export function describeWhen(when: When | undefined): string {
  if (when?.sandbox === undefined) return "";
  return ` when sandbox is ${typeof when.sandbox === "string" ? when.sandbox : when.sandbox.join(" or ")}`;
}
